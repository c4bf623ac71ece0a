// Package sts stands in for an aws-sdk-go-v2 service client.
package sts

type Client struct{}
