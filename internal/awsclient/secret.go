package awsclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// ErrEmptySecret is wrapped by SecretValue when a secret has no value yet
// (Terraform creates the secrets empty; values are set out of band).
var ErrEmptySecret = errors.New("is empty")

// SecretGetter is the one Secrets Manager call SecretValue makes;
// *secretsmanager.Client satisfies it.
type SecretGetter interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// SecretValue returns the current value of a secret: its SecretString
// without surrounding whitespace (a value set with `echo` keeps its
// newline) when that is not empty, else its SecretBinary. Errors name the
// secret: "read secret ARN: ..." or "secret ARN is empty" (ErrEmptySecret).
func SecretValue(ctx context.Context, api SecretGetter, arn string) ([]byte, error) {
	out, err := api.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return nil, fmt.Errorf("read secret %s: %w", arn, err)
	}
	var v []byte
	if out.SecretString != nil {
		v = bytes.TrimSpace([]byte(*out.SecretString))
	}
	if len(v) == 0 {
		v = out.SecretBinary
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("secret %s %w", arn, ErrEmptySecret)
	}
	return v, nil
}
