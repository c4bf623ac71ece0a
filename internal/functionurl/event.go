package functionurl

import "github.com/aws/aws-lambda-go/events"

// Event builds a function URL request event as Lambda sends it (payload
// version 2.0): rawPath and requestContext.http.path equal, the headers as
// given (Lambda lower-cases their names), a documentation source IP. Tests
// and local tools use it to drive a handler without Lambda.
func Event(method, rawPath, rawQuery string, headers map[string]string) events.LambdaFunctionURLRequest {
	return events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: rawPath, RawQueryString: rawQuery, Headers: headers,
		RequestContext: events.LambdaFunctionURLRequestContext{
			DomainName: "abc123.lambda-url.us-east-1.on.aws",
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{
				Method: method, Path: rawPath, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7",
			},
		},
	}
}
