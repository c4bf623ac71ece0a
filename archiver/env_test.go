package archiver

import (
	"strings"
	"testing"
)

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	base := map[string]string{"ARCHIVE_BUCKET": "b-archive", "ARCHIVE_PREFIX": "archive", "ARCHIVE_CATALOG": "glue", "ARCHIVE_NAMESPACE": "streamfold_dev_archive"}
	cfg, err := ConfigFromEnv(env(base))
	if err != nil || cfg.Catalog != "glue" || cfg.Namespace != "streamfold_dev_archive" || cfg.Bucket != "b-archive" || cfg.Prefix != "archive" {
		t.Fatalf("ConfigFromEnv = %+v, %v", cfg, err)
	}
	for _, tc := range []struct {
		unset, set, value, want string
	}{
		{unset: "ARCHIVE_CATALOG", want: "ARCHIVE_CATALOG is not set"},
		{unset: "ARCHIVE_NAMESPACE", want: "ARCHIVE_NAMESPACE is not set"},
		{unset: "ARCHIVE_NAMESPACE", set: "ARCHIVE_CATALOG", value: "glue:123456789012", want: "ARCHIVE_NAMESPACE is not set"},
		{unset: "ARCHIVE_BUCKET", want: "Config.Bucket"},
	} {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		delete(m, tc.unset)
		if tc.set != "" {
			m[tc.set] = tc.value
		}
		if _, err := ConfigFromEnv(env(m)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("without %s (%s=%s): %v, want an error with %q", tc.unset, tc.set, tc.value, err, tc.want)
		}
	}
	// A local catalog needs no namespace (the archiver's default).
	m := map[string]string{"ARCHIVE_BUCKET": "b-archive", "ARCHIVE_CATALOG": "sqlite:/tmp/c.db"}
	if _, err := ConfigFromEnv(env(m)); err != nil {
		t.Errorf("sqlite without a namespace: %v", err)
	}
}
