package ec2

import (
	"github.com/hashicorp/terraform-provider-aws/internal/conns"
)

// Uses calls what the package needs.
func Uses(c *conns.AWSClient) {
	_ = c.EC2Client(conns.Ctx)
}
