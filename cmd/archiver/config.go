package main

import "github.com/streamfold/streamfold/internal/awsclient"

// clientConfig is the function's AWS client configuration, read from the
// environment. In AWS every field is empty: the SDK's defaults (the
// execution role) apply. The overrides are for tests that run the built
// function against MinIO (internal/laptop/lambdatier):
//
//	STREAMFOLD_S3_ENDPOINT    S3 endpoint override (path-style addressing)
//	STREAMFOLD_S3_ACCESS_KEY  access key for that endpoint (default "local")
//	STREAMFOLD_S3_SECRET_KEY  secret key for that endpoint (default "local")
//	STREAMFOLD_DYNAMODB_ENDPOINT  DynamoDB endpoint override (DynamoDB Local)
//
// The keys are used only together with STREAMFOLD_S3_ENDPOINT (awsclient.Config).
func clientConfig(getenv func(string) string) awsclient.Config {
	return awsclient.Config{
		S3Endpoint:  getenv("STREAMFOLD_S3_ENDPOINT"),
		S3AccessKey: getenv("STREAMFOLD_S3_ACCESS_KEY"),
		S3SecretKey: getenv("STREAMFOLD_S3_SECRET_KEY"),

		DynamoDBEndpoint: getenv("STREAMFOLD_DYNAMODB_ENDPOINT"),
	}
}
