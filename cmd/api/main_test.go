package main

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

type fakeSecrets map[string]*secretsmanager.GetSecretValueOutput

func (f fakeSecrets) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	if out, ok := f[aws.ToString(in.SecretId)]; ok {
		return out, nil
	}
	return nil, errors.New("ResourceNotFoundException")
}

func TestLoad(t *testing.T) {
	sm := fakeSecrets{
		"arn:token": {SecretString: aws.String("lambda-token-0123456789")},
		"arn:key":   {SecretBinary: []byte("binary-cursor-key-0123456789")},
		"arn:empty": {SecretString: aws.String("")},
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	s, err := load(context.Background(), env(map[string]string{
		"STREAMFOLD_PREFIX": "sf", "STREAMFOLD_STAGE": "prod",
		"STREAMFOLD_API_TOKEN_SECRET_ARN": "arn:token", "STREAMFOLD_CURSOR_KEY_SECRET_ARN": "arn:key",
	}), sm)
	if err != nil || s.naming.Table("messages") != "sf-prod-messages" || s.token != "lambda-token-0123456789" || string(s.cursorKey) != "binary-cursor-key-0123456789" {
		t.Fatalf("load: %+v %v", s, err)
	}
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no token secret", map[string]string{"STREAMFOLD_CURSOR_KEY_SECRET_ARN": "arn:key"}, "STREAMFOLD_API_TOKEN_SECRET_ARN: is required"},
		{"missing secret", map[string]string{"STREAMFOLD_API_TOKEN_SECRET_ARN": "arn:nope", "STREAMFOLD_CURSOR_KEY_SECRET_ARN": "arn:key"},
			"STREAMFOLD_API_TOKEN_SECRET_ARN: read secret arn:nope: ResourceNotFoundException"},
		{"empty secret", map[string]string{"STREAMFOLD_API_TOKEN_SECRET_ARN": "arn:token", "STREAMFOLD_CURSOR_KEY_SECRET_ARN": "arn:empty"},
			"STREAMFOLD_CURSOR_KEY_SECRET_ARN: secret arn:empty is empty"},
		{"bad stage", map[string]string{"STREAMFOLD_STAGE": "qa"}, `schema: Naming.Stage: must be one of dev, stage, prod, got "qa"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(context.Background(), env(tt.env), sm)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}
