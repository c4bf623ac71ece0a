// Package ec2 stands in for an aws-sdk-go-v2 service client.
package ec2

type Client struct{}
