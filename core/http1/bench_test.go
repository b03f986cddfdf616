package http1

import "testing"

const wrkRequest = "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"

const browserRequest = "GET /static/app/main.js?v=12 HTTP/1.1\r\n" +
	"Host: www.example.com\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0\r\n" +
	"Accept: */*\r\n" +
	"Accept-Language: en-US,en;q=0.5\r\n" +
	"Accept-Encoding: gzip, deflate, br\r\n" +
	"Referer: https://www.example.com/index.html\r\n" +
	"Connection: keep-alive\r\n" +
	"Cookie: session=0123456789abcdef0123456789abcdef; theme=dark; lang=en\r\n" +
	"Sec-Fetch-Dest: script\r\n" +
	"If-None-Match: \"5f1c-61a3b2c4d5e6f\"\r\n" +
	"\r\n"

const backendResponse = "HTTP/1.1 200 OK\r\n" +
	"Content-Length: 13\r\n" +
	"Content-Type: text/plain\r\n" +
	"Date: Sun, 29 Nov 2026 22:00:00 GMT\r\n" +
	"\r\n" +
	"Hello, World!"

func benchParseRequest(b *testing.B, raw string) {
	buf := []byte(raw)
	var h Head
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if n, err := h.ParseRequest(buf); err != nil || n != len(buf) {
			b.Fatal(n, err)
		}
	}
}

func BenchmarkParseWrkRequest(b *testing.B)     { benchParseRequest(b, wrkRequest) }
func BenchmarkParseBrowserRequest(b *testing.B) { benchParseRequest(b, browserRequest) }

func BenchmarkParseBackendResponse(b *testing.B) {
	buf := []byte(backendResponse)
	var h Head
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if n, err := h.ParseResponse(buf, MethodGET); err != nil || n != len(buf)-13 {
			b.Fatal(n, err)
		}
	}
}
