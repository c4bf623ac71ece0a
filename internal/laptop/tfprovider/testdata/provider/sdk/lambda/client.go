// Package lambda stands in for an aws-sdk-go-v2 service client.
package lambda

type Client struct{}
