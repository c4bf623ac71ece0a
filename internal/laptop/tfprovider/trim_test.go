package tfprovider

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/streamfold/streamfold/internal/laptop/golden"
)

// copyDir copies a fixture tree into a temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestConfigTypes(t *testing.T) {
	got, err := ConfigTypes("testdata/config")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"aws_caller_identity", "aws_dynamodb_table", "aws_lambda_function"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ConfigTypes = %v, want %v (random_id is not aws)", got, want)
	}
	if _, err := ConfigTypes(t.TempDir()); err == nil {
		t.Fatal("ConfigTypes of a directory without *.tf: no error")
	}
}

// TestTrim trims the miniature provider (testdata/provider: the two
// generated registries, five services, lambda importing ec2 as the real one
// does) and checks what was kept, that the result builds, and the rewritten
// files against golden copies (go test -update rewrites them).
func TestTrim(t *testing.T) {
	cases := []struct {
		name                     string
		types                    []string
		services, clients        []string
		removedSvcs, removedClis int
	}{
		{
			name:     "a table only",
			types:    []string{"aws_dynamodb_table"},
			services: []string{"dynamodb", "meta", "sts"},
			clients:  []string{"DynamoDBClient", "STSClient"},
			// ec2 and lambda are dropped, with their clients.
			removedSvcs: 2, removedClis: 2,
		},
		{
			name:     "a function keeps what its service imports",
			types:    []string{"aws_caller_identity", "aws_dynamodb_table", "aws_lambda_function"},
			services: []string{"dynamodb", "lambda", "meta", "sts"},
			// ec2 is no longer registered, but lambda imports it, so its
			// client stays.
			clients:     []string{"DynamoDBClient", "EC2Client", "LambdaClient", "STSClient"},
			removedSvcs: 1, removedClis: 0,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, "testdata/provider")
			rep, err := Trim(dir, tc.types)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rep.Services, tc.services) || !reflect.DeepEqual(rep.Clients, tc.clients) ||
				rep.RemovedServices != tc.removedSvcs || rep.RemovedClients != tc.removedClis {
				t.Fatalf("Trim = %+v, want services %v, clients %v, removed %d services and %d clients",
					rep, tc.services, tc.clients, tc.removedSvcs, tc.removedClis)
			}
			cmd := exec.Command("go", "build", "-o", os.DevNull, ".") // the provider's main, as .ci/tools.sh builds it
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the trimmed provider does not build: %v\n%s", err, out)
			}
			for _, f := range []string{servicePackagesFile, awsClientFile} {
				got, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				golden.Check(t, filepath.Join("testdata", "golden", filepath.Base(t.Name()), filepath.Base(f)+".golden"), got)
			}
		})
	}
}

func TestTrimRefuses(t *testing.T) {
	dir := copyDir(t, "testdata/provider")
	if _, err := Trim(dir, []string{"aws_dynamodb_table", "aws_no_such_thing"}); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("an unregistered type: err = %v, want ErrUnknownType", err)
	}
	if _, err := Trim(t.TempDir(), []string{"aws_dynamodb_table"}); err == nil {
		t.Fatal("a directory that is not the provider's source: no error")
	}
}
