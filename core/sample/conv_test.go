package sample

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/hex"
	"testing"
)

// convRequest is a request with the variables the cases read, as
// regtests/vtc/sample/converters_vars.vtc sets them.
func convRequest(t testing.TB) *Request {
	r := request(t, testReq)
	set := func(name string, s Sample) {
		n, err := ParseVarName(name)
		if err != nil {
			t.Fatal(err)
		}
		r.Vars.Set(n, &s)
	}
	set("txn.v", Sample{T: TStr, B: []byte("var_content")})
	set("txn.n", Sample{T: TSint, I: 3})
	set("txn.key", Sample{T: TStr, B: []byte(base64.StdEncoding.EncodeToString([]byte("my_super_secret_long_key")))})
	h := sha1Sum("1")
	set("txn.h", Sample{T: TBin, B: h})
	set("txn.json", Sample{T: TStr, B: []byte(`{"a":[1,"x\\ty"],"b":2.5}`)})
	return r
}

func sha1Sum(s string) []byte {
	e, _ := CompileExpr(nil, "str("+s+"),sha1")
	var smp Sample
	r := &Request{}
	e.Eval(r, &smp)
	return append([]byte(nil), smp.B...)
}

func evalText(t *testing.T, r *Request, expr string) (string, bool) {
	t.Helper()
	e, err := CompileExpr(nil, expr)
	if err != nil {
		t.Errorf("%s: %v", expr, err)
		return "", false
	}
	var s Sample
	if !e.Eval(r, &s) {
		return "", false
	}
	return string(AppendText(nil, r, &s)), true
}

// exprCase is an expression and its text; "<none>": no sample.
type exprCase struct{ expr, want string }

func checkExprs(t *testing.T, r *Request, cases []exprCase) {
	t.Helper()
	for _, tc := range cases {
		got, ok := evalText(t, r, tc.expr)
		if !ok {
			got = "<none>"
		}
		if got != tc.want {
			t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestConverters(t *testing.T) {
	for _, tc := range convCases {
		got, ok := evalText(t, convRequest(t), tc.expr)
		switch {
		case tc.absent && ok:
			t.Errorf("%s = %q, want no sample", tc.expr, got)
		case !tc.absent && !ok:
			t.Errorf("%s: no sample, want %q", tc.expr, tc.want)
		case got != tc.want:
			t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// TestConvertersMore covers what a header cannot show (binary output,
// types) and inputs the vtc scripts do not send.
func TestConvertersMore(t *testing.T) {
	for _, tc := range []struct {
		expr, want string // want "<none>": no sample
	}{
		{"str(abc),length", "3"},
		{"str(a),bytes(1),length", "0"},
		{"str(a),bytes(1),base64", ""},
		{"str(a),bytes(1),b64dec,length", "0"},
		{"str(Zm9v),b64dec,bytes(1),hex", "6F6F"},
		{"str(%41%4a),url_dec", "AJ"},
		{"str(a+b),url_dec", "a+b"},
		{"str(a+b),url_dec(1)", "a b"},
		{"str(\xE0),json(utf8)", "<none>"},
		{"str(-\xE0-),json(utf8s)", "--"},
		{"str(\t),json", "\\t"},
		{"str(\x01),json", "\\u0001"},
		{"str(é),json(utf8)", "\\u00e9"},
		{"str(é),json", "\\u00c3\\u00a9"},
		{"str(a.b.c),field(1,.)", "a"},
		{"str(a.b.c),field(-3,.)", "a"},
		{"str(a.b.c),field(-4,.)", "<none>"},
		{"str(..a),word(1,.)", "a"},
		{"int(1),bool", "1"},
		{"int(7),div(-2)", "-3"},
		{"int(-9223372036854775808),div(-1)", "9223372036854775807"},
		{"int(-9223372036854775808),mod(-1)", "0"},
		{"int(-9223372036854775808),neg", "9223372036854775807"},
		{"int(-9223372036854775808),mul(-1)", "9223372036854775807"},
		{"int(9223372036854775807),mul(-2)", "-9223372036854775808"},
		{"int(5),sub(-9223372036854775808)", "9223372036854775807"},
		{"int(-5),sub(-9223372036854775808)", "9223372036854775803"},
		{"str(12),add(1)", "13"},
		{"int(4),add(txn.n)", "7"},
		{"int(4),sub(txn.n),mul(txn.n)", "3"},
		{"int(1),add", "1"},
		{"str(abc),set-var(txn.x),length", "3"},
		{"str(abc),set-var(txn.v,ifnotexists)", "<none>"},
		{"str(abc),set-var(txn.new,ifnotexists)", "abc"},
		{"str(a),bytes(1),set-var(txn.new,ifnotempty)", "<none>"},
		{"int(1),set-var(txn.n,ifgt)", "1"},
		{"int(5),set-var(txn.n,ifgt)", "<none>"},
		{"int(5),set-var(txn.n,iflt)", "5"},
		{"str(var_content),secure_memcmp(txn.v)", "1"},
		{"str(var_contenX),secure_memcmp(txn.v)", "0"},
		{"str(var_conten),secure_memcmp(txn.v)", "0"},
		{"str(a),digest(sha3-256),hex", "80084BF2FBA02475726FEB2CAB2D8215EAB14BC6BDD8BFB2C8151257032ECD8B"},
		{"str(a),digest(sha512-256),length", "32"},
		{"str(1),hmac(sha256,txn.none)", "<none>"},
		{"ipv4(10.1.2.3),ipmask(0)", "0.0.0.0"},
		{"ipv6(2001:db8::1),ipmask(8,128)", "2001:db8::1"},
		{"src,ipmask(16)", "192.0.0.0"},
		{"str('{\"a\":{\"b\":[10,20,{\"c\":true}]}}'),json_query('$.a.b[2].c')", "1"},
		{"str('{\"a\":{\"b\":[10,20]}}'),json_query('$.a.b[1]',int)", "20"},
		{"str('{\"a\":9007199254740992}'),json_query('$.a',int)", "<none>"},
		{"str('{\"a\":1,\"a\":2}'),json_query('$.a')", "1"},
		{"str('[1,2,3]'),json_query('$[2]')", "3"},
		{"str('{\"a\":\"x\\/y\"}'),json_query('$.a')", "<none>"},
		{"str('{\"a\":'),json_query('$.a')", "<none>"},
		{"str(x),json_query(a)", "<none>"},
		{"int(1),http_date(0,s)", "Thu, 01 Jan 1970 00:00:01 GMT"},
		{"int(3600),utime(%H:%M)", "01:00"},
		{"str(abc),debug(x),upper", "ABC"},
		{"str(Abc),strcmp(txn.v)", "-53"},
		{"str(1),hmac(sha1,a2V5),length", "20"},
		{"str('de;q=0.1,en;q=0'),language(en;de)", "de"},
		{"str(en-gb),language(en)", "en"},
		{"str(EN),language(en)", "<none>"},
	} {
		got, ok := evalText(t, convRequest(t), tc.expr)
		if !ok {
			got = "<none>"
		}
		if got != tc.want {
			t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestConverterTypes(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want Type
	}{
		{"str(a),sha1", TBin},
		{"str(a),hex", TStr},
		{"int(1),odd", TBool},
		{"str(a),length", TSint},
		{"str('{\"a\":true}'),json_query('$.a')", TBool},
		{"str('{\"a\":1}'),json_query('$.a',int)", TSint},
		{"ipv6(::1),ipmask(8,64)", TIPv6},
		{"int(1),htonl", TBin},
	} {
		e, err := CompileExpr(nil, tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		var s Sample
		if !e.Eval(convRequest(t), &s) || s.T != tc.want {
			t.Errorf("%s: type %v, want %v", tc.expr, s.T, tc.want)
		}
	}
}

func TestAESGCMDec(t *testing.T) {
	key := []byte("0123456789abcdef")
	nonce := []byte("unique nonce")
	blk, _ := aes.NewCipher(key)
	g, _ := cipher.NewGCM(blk)
	sealed := g.Seal(nil, nonce, []byte("secret text"), nil)
	ct, tag := sealed[:len(sealed)-16], sealed[len(sealed)-16:]
	b64 := base64.StdEncoding.EncodeToString
	r := convRequest(t)
	n, _ := ParseVarName("txn.key16")
	r.Vars.Set(n, &Sample{T: TStr, B: []byte(b64(key))})
	for _, tc := range []struct{ expr, want string }{
		{"str(" + b64(ct) + "),b64dec,aes_gcm_dec(128," + b64(nonce) + "," + b64(key) + "," + b64(tag) + ")", "secret text"},
		{"str(" + b64(ct) + "),b64dec,aes_gcm_dec(128," + b64(nonce) + ",txn.key16," + b64(tag) + ")", "secret text"},
		{"str(" + b64(ct) + "),b64dec,aes_gcm_dec(256," + b64(nonce) + "," + b64(key) + "," + b64(tag) + ")", "<none>"},
		{"str(" + b64(ct) + "),b64dec,aes_gcm_dec(128," + b64(nonce) + "," + b64(key) + "," + b64(make([]byte, 16)) + ")", "<none>"},
	} {
		got, ok := evalText(t, r, tc.expr)
		if !ok {
			got = "<none>"
		}
		if got != tc.want {
			t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// TestConverterErrors compares the argument errors with haproxy -c's
// (the text after "failed to parse sample expression <...> : ").
func TestConverterErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"str(a),add(x)", "invalid args in converter 'add' : expects an integer or a variable name"},
		{"str(1),add(1x)", "invalid args in converter 'add' : expects an integer or a variable name"},
		{"str(1),add(txn.a-b)", "invalid args in converter 'add' : expects an integer or a variable name"},
		{"str(1),field(0,/)", "invalid args in converter 'field' : Unexpected value 0 for index"},
		{"str(1),field(1,)", "invalid args in converter 'field' : Empty separators list"},
		{"str(1),field(1)", "invalid arg 2 in converter 'field' : missing arguments (got 1/2), type 'string' expected"},
		{"str(1),bytes(x)", "invalid arg 1 in converter 'bytes' : failed to parse 'x' as type 'integer' at position 1"},
		{"str(1),bytes()", "invalid arg 1 in converter 'bytes' : expected type 'integer' at position 1, but got nothing"},
		{"str(1),bytes", "invalid arg 1 in converter 'bytes' : expected type 'integer' at position 1, but got nothing"},
		{"str(1),ipmask(x)", "invalid arg 1 in converter 'ipmask' : failed to parse 'x' as type 'IPv4 mask' at position 1"},
		{"str(1),ipmask(33)", "invalid arg 1 in converter 'ipmask' : failed to parse '33' as type 'IPv4 mask' at position 1"},
		{"str(1),ipmask(24,129)", "invalid arg 2 in converter 'ipmask' : failed to parse '129' as type 'IPv6 mask' at position 2"},
		{"str(1),ipmask", "invalid arg 1 in converter 'ipmask' : expected type 'IPv4 mask' at position 1, but got nothing"},
		{"str(1),eq(1)", "unknown converter 'eq'"},
		{"str(a),concat(,foo,)", "invalid args in converter 'concat' : failed to register variable name 'foo'"},
		{"str(a),strcmp()", "invalid args in converter 'strcmp' : missing variable name"},
		{"str(a),strcmp", "invalid args in converter 'strcmp' : missing variable name"},
		{"str(a),secure_memcmp(x)", "invalid args in converter 'secure_memcmp' : failed to register variable name 'x'"},
		{"str(a),hmac(sha1,abc)", "invalid args in converter 'hmac' : failed to parse key : argument needs to be base64 encoded, and can either be a string or a variable"},
		{"str(a),hmac(sha999,a2V5)", "invalid args in converter 'hmac' : algorithm must be a valid OpenSSL message digest name."},
		{"str(a),set-var(x)", "invalid args in converter 'set-var' : invalid variable name 'x'. A variable name must be start by its scope. The scope can be 'proc', 'sess', 'txn', 'req', 'res' or 'check'"},
		{"str(a),set-var(txn.x,ifbogus)", "invalid args in converter 'set-var' : unknown condition \"ifbogus\""},
		{"str(a),sha2(100)", "invalid args in converter 'sha2' : Unsupported number of bits: '100'"},
		{"str(a),sha2(x)", "invalid arg 1 in converter 'sha2' : failed to parse 'x' as type 'integer' at position 1"},
		{"str(a),crc32(x)", "invalid arg 1 in converter 'crc32' : failed to parse 'x' as type 'integer' at position 1"},
		{"str(a),fix_tag_value", "invalid args in converter 'fix_tag_value' : Unknown FIX tag name ''"},
		{"str(a),fix_tag_value(0)", "invalid args in converter 'fix_tag_value' : Unknown FIX tag name '0'"},
		{"str(a),fix_tag_value(12x)", "invalid args in converter 'fix_tag_value' : Unknown FIX tag name '12x'"},
		{"str(a),fix_is_valid(1)", "invalid arg 1 in converter 'fix_is_valid' : expected ')' before '1)'"},
		{"str(a),mqtt_field_value", "invalid arg 2 in converter 'mqtt_field_value' : missing arguments (got 1/2), type 'string' expected"},
		{"str(a),mqtt_field_value(connect)", "invalid arg 2 in converter 'mqtt_field_value' : missing arguments (got 1/2), type 'string' expected"},
		{"str(a),mqtt_field_value(foo,flags)", "invalid args in converter 'mqtt_field_value' : Unknown MQTT type 'foo'"},
		{"str(a),mqtt_field_value(16,flags)", "invalid args in converter 'mqtt_field_value' : Unknown MQTT type '16'"},
		{"str(a),mqtt_field_value(2x,flags)", "invalid args in converter 'mqtt_field_value' : Unknown MQTT type '2x'"},
		{"str(a),mqtt_field_value(connect,reason_code)", "invalid args in converter 'mqtt_field_value' : Unknown MQTT field name 'reason_code' for packet type 'connect'"},
		{"str(a),mqtt_field_value(pingreq,flags)", "invalid args in converter 'mqtt_field_value' : Unknown MQTT field name 'flags' for packet type 'pingreq'"},
		{"str(a),mqtt_field_value(connect,)", "invalid args in converter 'mqtt_field_value' : Unknown MQTT field name '' for packet type 'connect'"},
		{"str(a),protobuf", "invalid arg 1 in converter 'protobuf' : expected type 'Protocol buffers field number' at position 1, but got nothing"},
		{"str(a),protobuf()", "invalid arg 1 in converter 'protobuf' : expected type 'Protocol buffers field number' at position 1, but got nothing"},
		{"str(a),protobuf(a)", "invalid arg 1 in converter 'protobuf' : failed to parse 'a' as type 'Protocol buffers field number' at position 1"},
		{"str(a),protobuf(1.)", "invalid arg 1 in converter 'protobuf' : failed to parse '1.' as type 'Protocol buffers field number' at position 1"},
		{"str(a),protobuf(-1)", "invalid arg 1 in converter 'protobuf' : failed to parse '-1' as type 'Protocol buffers field number' at position 1"},
		{"str(a),protobuf(1,)", "invalid args in converter 'protobuf' : Wrong protocol buffer type ''"},
		{"str(a),ungrpc(1,Int32)", "invalid args in converter 'ungrpc' : Wrong protocol buffer type 'Int32'"},
		{"str(a),protobuf(1,2,3)", "invalid arg 2 in converter 'protobuf' : expected ')' before ',3)'"},
		{"str(a),jwt_verify(PS256,x)", "invalid args in converter 'jwt_verify' : RSASSA-PSS JWS signing not managed yet"},
		{"str(a),jwt_verify(FOO,x)", "invalid args in converter 'jwt_verify' : unknown JWT algorithm: FOO"},
		{"str(a),jwt_verify(hs256,x)", "invalid args in converter 'jwt_verify' : unknown JWT algorithm: hs256"},
		{"str(a),jwt_verify(RS256)", "invalid arg 2 in converter 'jwt_verify' : missing arguments (got 1/2), type 'string' expected"},
		{"str(a),jwt_header_query('$.a',foo)", "invalid args in converter 'jwt_header_query' : output_type only supports \"int\" as argument"},
		{"str(a),sha2(100,2)", "invalid arg 2 in converter 'sha2' : expected ')' before ',2)'"},
		{"str(a),xxh3(x,2)", "invalid arg 1 in converter 'xxh3' : failed to parse 'x' as type 'integer' at position 1"},
		{"str(a),field(0,/,1,4)", "invalid arg 3 in converter 'field' : expected ')' before ',4)'"},
		{"str(a),xxh3(x)", "invalid arg 1 in converter 'xxh3' : failed to parse 'x' as type 'integer' at position 1"},
		{"str(a),xxh3(1,2)", "invalid arg 2 in converter 'xxh3' : expected ')' before ',2)'"},
		{"str(a),regsub(a,b,x)", "invalid args in converter 'regsub' : invalid regex flag 'x', only 'i' and 'g' are supported"},
		{"str(a),json(x)", "invalid args in converter 'json' : Unexpected input code type. Allowed value are 'ascii', 'utf8', 'utf8s', 'utf8p' and 'utf8ps'"},
		{"str(a),url_enc(x)", "invalid args in converter 'url_enc' : Unexpected encode type. Allowed value is 'query'"},
		{"str(a),json_query()", "invalid args in converter 'json_query' : json_path must not be empty"},
		{"str(a),be2dec(:,0)", "invalid args in converter 'be2dec' : chunk_size out of [1..8] range (0)"},
		{"str(a),be2dec", "invalid args in converter 'be2dec' : chunk_size out of [1..8] range (0)"},
		{"str(a),be2dec(:,1,2)", "invalid args in converter 'be2dec' : Unsupported truncate value (2)"},
		{"str(a),be2hex(:,0)", "invalid args in converter 'be2hex' : chunk_size needs to be positive (0)"},
		{"str(a),add_item(:)", "invalid arg 2 in converter 'add_item' : missing arguments (got 1/2), type 'string' expected"},
		{"str(a),add_item(:,,)", "invalid args in converter 'add_item' : one of the optional arguments has to be nonempty"},
		{"int(1),http_date(0,x)", "invalid args in converter 'http_date' : expects 's', 'ms' or 'us', got 'x'"},
		{"str(a),debug(x,nosink)", "invalid args in converter 'debug' : No such sink 'nosink'"},
		{"str(a),aes_gcm_dec(100,a,b,c)", "invalid args in converter 'aes_gcm_dec' : key size must be 128, 192 or 256 (bits)."},
		{"str(a),aes_gcm_dec(128,a,b,c)", "invalid args in converter 'aes_gcm_dec' : failed to parse nonce : argument needs to be base64 encoded, and can either be a string or a variable"},
		{"str(a),iif(a)", "invalid arg 2 in converter 'iif' : missing arguments (got 1/2), type 'string' expected"},
		{"str(a),iif", "invalid arg 2 in converter 'iif' : missing arguments (got 1/2), type 'string' expected"},
		{"str(a),lower(1)", "invalid arg 1 in converter 'lower' : expected ')' before '1)'"},
		{"str(a),regsub((,b)", "invalid args in converter 'regsub' : regex '(' is invalid"},
	} {
		_, err := CompileExpr(nil, tc.expr)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.expr, err, tc.want)
		}
	}
	// Accepted by haproxy -c.
	for _, expr := range []string{"int(0),ltime", "str(a),add", "str(a),language()", "str(a),concat", "int(1),http_date",
		"str(a),add(-)", "str(a),add(+3)", "str(a),bytes(+1)", "str(a),ipmask(255.255.0.0)", "str(a),ipmask(24,ffff::)",
		"str(a),digest(md5)", "str(a),url_dec()", "str(a),sha2()", "str(a),debug",
		"str(a),fix_tag_value(msgtype)", "str(a),mqtt_is_valid()", "str(a),mqtt_field_value(15,21)", "str(a),xxh3(-5)",
		"str(a),protobuf(1..2)", "str(a),protobuf(.5)", "str(a),ungrpc(99999999999,double)",
		"str(a),jwt_verify(txn.a,txn.b)", "str(a),jwt_verify(none,x)", "str(a),jwt_verify(RS256,/nonexistent)", "str(a),jwt_payload_query"} {
		if _, err := CompileExpr(nil, expr); err != nil {
			t.Errorf("%s: %v", expr, err)
		}
	}
}

// TestConvertersAllocateNothing: a warm Request evaluates converters
// without allocating, except regsub (Go's regexp allocates its matches)
// and the digests built from a hash.Hash (digest, hmac).
func TestConvertersAllocateNothing(t *testing.T) {
	r := convRequest(t)
	for name, h := range map[string]string{"txn.fix": fix44, "txn.mqtt": mqtt50Complex, "txn.pb": pbRect, "txn.grpc": "000000002e" + pbRect, "txn.jwt": hex.EncodeToString([]byte(tokHS256))} {
		n, _ := ParseVarName(name)
		b, _ := hex.DecodeString(h)
		r.Vars.Set(n, &Sample{T: TBin, B: b})
	}
	var exprs []*SampleExpr
	for _, x := range []string{
		"hdr(host),lower,upper,length", "path,hex,hex2i", "path,base64,b64dec", "path,url_enc,url_dec",
		"path,crc32,add(1)", "path,xxh64", "path,xxh3(7)", "path,xxh32(5)", "path,wt6(1)", "path,djb2", "path,sdbm", "path,crc32c",
		"path,sha1,hex", "path,sha2(512),base64", "path,field(2,/)", "path,word(-1,/)", "path,json",
		"path,concat(<,txn.v,>)", "path,bytes(1,3),be2hex(:,1)", "src,ipmask(24)",
		"int(1700000000),utime(%Y-%m-%d)", "int(1),http_date", "path,strcmp(txn.v)", "int(3),mul(txn.n),div(2),mod(5)",
		"var(txn.json),json_query('$.a[1]')", "var(txn.json),json_query('$.b')", "path,ltrim(/),rtrim(s),cut_crlf",
		"var(txn.fix),fix_is_valid", "var(txn.fix),fix_tag_value(49)", "var(txn.mqtt),mqtt_is_valid",
		"var(txn.mqtt),mqtt_field_value(connect,flags)", "var(txn.mqtt),mqtt_field_value(connect,username)",
		"var(txn.jwt),jwt_verify(HS256,'hmac key hs256')", "var(txn.jwt),jwt_payload_query('$.name')",
		"var(txn.pb),protobuf(48.59.1,int32)", "var(txn.pb),protobuf(49.59)", "var(txn.grpc),ungrpc(49.59.2,sint64)",
	} {
		e, err := CompileExpr(nil, x)
		if err != nil {
			t.Fatalf("%s: %v", x, err)
		}
		exprs = append(exprs, e)
	}
	var s Sample
	allocs := testing.AllocsPerRun(50, func() {
		for _, e := range exprs {
			if !e.Eval(r, &s) {
				t.Fatalf("%s: no sample", e.Text)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per evaluation", allocs)
	}
}

func FuzzJSONQuery(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"x"}]}`, `[`, `{"a":"\u00`, `{"a" 1}`, `[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]`} {
		f.Add(s, "$.a[1].b")
	}
	f.Fuzz(func(t *testing.T, doc, path string) {
		if path == "" {
			return
		}
		steps, ok := parseJSONPath(path)
		if !ok {
			return
		}
		a := []Arg{{S: path, V: steps}}
		s := Sample{T: TStr, B: []byte(doc)}
		convJSONQuery(&Request{}, a, &s)
	})
}

func FuzzDecoders(f *testing.F) {
	for _, s := range []string{"aGk=", "a%2", "\xe0\x80", "//a//b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, fn := range []func(*Request, []Arg, *Sample) bool{convB64Dec(false), convB64Dec(true), convURLDec, convJSON, convLanguage} {
			s := Sample{T: TStr, B: []byte(in)}
			fn(&Request{}, []Arg{{S: "en;fr", I: jsonUTF8S}, {S: "x"}}, &s)
		}
		for _, fn := range []func(*Request, []Arg, *Sample) bool{convField, convWord} {
			s := Sample{T: TStr, B: []byte(in)}
			fn(&Request{}, []Arg{{I: -2}, {S: "/"}, {I: 2}}, &s)
		}
	})
}

func BenchmarkConverters(b *testing.B) {
	r := convRequest(b)
	for _, x := range []string{"path,crc32", "path,crc32c", "path,djb2", "path,sdbm", "path,wt6", "path,xxh32", "path,xxh64",
		"path,sha1", "path,sha2", "path,hex", "path,base64", "path,base64,b64dec", "path,url_enc", "path,url_enc,url_dec",
		"path,json", "path,lower", "path,hmac(sha256,a2V5)", "path,digest(md5)"} {
		e, err := CompileExpr(nil, x)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(x, func(b *testing.B) {
			var s Sample
			b.ReportAllocs()
			for b.Loop() {
				e.Eval(r, &s)
			}
		})
	}
}
