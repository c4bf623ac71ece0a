package schema_test

import (
	"testing"

	"github.com/streamfold/streamfold/schema"
)

func TestKeys(t *testing.T) {
	cases := []struct{ name, got, want string }{
		{"job", schema.JobKey(12345, 987654321), "12345#987654321"},
		{"run", schema.RunKey(12345, 11940972019, 2), "12345#11940972019#2"},
		{"deployment", schema.DeploymentKey(0, 7), "0#7"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s key = %q, want %q", c.name, c.got, c.want)
		}
	}
	s := schema.JobStatuses()
	s[0] = "changed"
	if schema.JobStatuses()[0] != "queued" {
		t.Error("JobStatuses returns a shared slice")
	}
}
