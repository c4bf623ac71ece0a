// Package functionurl serves an http.Handler behind an AWS Lambda function
// URL: payload format 2.0, invoke mode BUFFERED. It is the one adapter that
// cmd/api (through api.LambdaHandler) and cmd/ingest share.
//
// # Request
//
// [Request] converts an events.LambdaFunctionURLRequest into the
// *http.Request that net/http's server would hand the handler:
//
//   - the method is requestContext.http.method, which is required;
//   - the request target is rawPath (falling back to
//     requestContext.http.path, then "/") plus "?" rawQueryString; it is
//     parsed with url.ParseRequestURI, so r.URL holds the path and query
//     only (escapes such as %2F are kept in r.URL.RawPath) and r.RequestURI
//     is the target;
//   - headers arrive with lower-case names and are canonicalised; a "host"
//     header becomes r.Host and leaves r.Header, as in net/http, and
//     requestContext.domainName is r.Host when there is none;
//   - the cookies array becomes one "Cookie" header, joined with "; "
//     (RFC 6265 §5.4), replacing any "cookie" header;
//   - a base64-encoded body is decoded, and r.ContentLength is the decoded
//     length;
//   - r.RemoteAddr is requestContext.http.sourceIp (an address without a
//     port: the event carries none).
//
// Every error Request returns wraps [ErrMalformedRequest] and names the
// event field at fault.
//
// # Response
//
// [Serve] runs the handler into a buffer with the semantics of net/http's
// server: the first WriteHeader (or Write, as 200) fixes the status and the
// headers, later header changes are ignored, 1xx codes other than 101 are
// dropped (a buffered response cannot carry interim responses), a
// Content-Type is sniffed with http.DetectContentType when the handler sets
// none (nor Content-Encoding or Transfer-Encoding) and writes a body, and a
// body written under 204 or 304 is refused with http.ErrBodyNotAllowed. The
// buffer does not implement http.Flusher: nothing reaches the client before
// the handler returns. The recording becomes the
// events.LambdaFunctionURLResponse:
//
//   - one value per header, repeated values joined with ", "; a header whose
//     value list is empty is left out;
//   - Set-Cookie headers become Cookies, in the order written;
//   - the body is sent as text when it is valid UTF-8 and holds no NUL byte,
//     and base64-encoded (IsBase64Encoded) otherwise.
//
// The content type plays no part in the body encoding: the function URL
// decodes a base64 body before it answers, so the client receives the same
// bytes either way, and the only thing that matters is that the body
// survives the JSON of the invocation response, which a valid UTF-8 string
// without NUL does (encoding/json would replace invalid UTF-8 with U+FFFD).
// Text is smaller and readable in logs, so it is preferred whenever it is
// safe.
//
// A malformed event is answered 400, never an invocation error (Lambda would
// retry an error, and the event would fail again): the caller's
// [BadRequestFunc] writes that answer, so that each API keeps its own error
// body shape. Serve is safe for concurrent use if the handler is.
package functionurl
