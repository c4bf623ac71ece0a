package deploy

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// TestLocalAWS: the real SDK's GetCallerIdentity gets the offline account;
// any other call is refused, recorded and named by Unexpected.
func TestLocalAWS(t *testing.T) {
	l, err := StartLocalAWS()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !strings.HasPrefix(l.URL, "http://127.0.0.1:") {
		t.Fatalf("URL %s is not on 127.0.0.1", l.URL)
	}
	env := l.Env()
	client := sts.New(sts.Options{
		Region:       env["AWS_REGION"],
		BaseEndpoint: aws.String(env["AWS_ENDPOINT_URL"]),
		Credentials:  credentials.NewStaticCredentialsProvider(env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], ""),
	})
	out, err := client.GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(out.Account) != OfflineAccount || !strings.Contains(aws.ToString(out.Arn), OfflineAccount) {
		t.Fatalf("GetCallerIdentity = %s / %s, want account %s", aws.ToString(out.Account), aws.ToString(out.Arn), OfflineAccount)
	}
	if err := l.Unexpected(); err != nil {
		t.Fatalf("after GetCallerIdentity only: %v", err)
	}

	// Another call (an unsigned query-protocol request for IAM) is refused.
	resp, err := http.PostForm(l.URL, url.Values{"Action": {"ListRoles"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("ListRoles: status %d, want 400", resp.StatusCode)
	}
	err = l.Unexpected()
	if !errors.Is(err, ErrUnexpectedCall) || !strings.Contains(err.Error(), "ListRoles") {
		t.Fatalf("Unexpected = %v, want ErrUnexpectedCall naming ListRoles", err)
	}
	calls := l.Calls()
	if len(calls) != 2 || !calls[0].Answered || calls[0].Service != "sts" || calls[1].Answered {
		t.Fatalf("Calls = %+v", calls)
	}
}

func TestOfflineEnv(t *testing.T) {
	l := &LocalAWS{URL: "http://127.0.0.1:1"}
	env := OfflineEnv([]string{"HOME=/h", "AWS_PROFILE=prod-admin", "AWS_ACCESS_KEY_ID=AKIAREAL", "TF_LOG=trace", "https_proxy=http://corp:3128", "PATH=/bin"}, l, "/tools/terraform.rc")
	for k, want := range map[string]string{
		"HOME": "/h", "PATH": "/bin", "AWS_PROFILE": "", "AWS_ACCESS_KEY_ID": l.Env()["AWS_ACCESS_KEY_ID"],
		"AWS_ENDPOINT_URL": l.URL, "TF_CLI_CONFIG_FILE": "/tools/terraform.rc", "HTTPS_PROXY": "http://127.0.0.1:9",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	for _, k := range []string{"TF_LOG", "https_proxy"} {
		if _, ok := env[k]; ok {
			t.Errorf("%s kept from the caller's environment", k)
		}
	}
}

func TestOfflineEnvWithoutMirror(t *testing.T) {
	env := OfflineEnv([]string{"https_proxy=http://corp:3128", "AWS_PROFILE=x"}, &LocalAWS{URL: "http://127.0.0.1:1"}, "")
	if env["https_proxy"] != "http://corp:3128" || env["HTTPS_PROXY"] != "" || env["TF_CLI_CONFIG_FILE"] != "" {
		t.Fatalf("without a mirror, init needs the registry through the caller's proxy: %v", env)
	}
	if env["AWS_PROFILE"] != "" {
		t.Fatal("AWS_PROFILE kept")
	}
}
