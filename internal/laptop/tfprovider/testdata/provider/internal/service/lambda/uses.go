package lambda

import (
	"github.com/hashicorp/terraform-provider-aws/internal/conns"
	tfec2 "github.com/hashicorp/terraform-provider-aws/internal/service/ec2"
)

// Uses calls what the package needs.
func Uses(c *conns.AWSClient) {
	_ = c.LambdaClient(conns.Ctx)
	_ = tfec2.ServicePackage(nil)
}
