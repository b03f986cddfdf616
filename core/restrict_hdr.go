package core

// option http-restrict-req-hdr-names preserve|delete|reject: what becomes
// of request header fields whose name has a character other than a
// letter, a digit or '-' (core/stream/restrict_hdr.go applies it).

// The RestrictHdrNames settings.
const (
	RestrictDelete = 'd'
	RestrictReject = 'r'
)

func init() {
	registerKeywords(Keyword{Name: "option http-restrict-req-hdr-names", Scope: scopeProxy, Args: 1,
		TooMany: func(c *kwCtx, args []string) error {
			return errf("'option' cannot handle unexpected argument '%s'.", args[1])
		},
		Parse: func(c *kwCtx, args []string) error {
			const name = "http-restrict-req-hdr-names"
			if c.neg || c.def {
				return tightf("negation/default is not supported for option '%s'.", name)
			}
			switch first(args) {
			case "":
				return errf("missing parameter. option '%s' expects 'preserve', 'reject' or 'delete' option.", name)
			case "preserve":
				c.p.RestrictHdrNames = 0
			case "delete":
				c.p.RestrictHdrNames = RestrictDelete
			case "reject":
				c.p.RestrictHdrNames = RestrictReject
			default:
				return errf("invalid parameter '%s'. option '%s' expects 'preserve', 'reject' or 'delete' option.", args[0], name)
			}
			return nil
		}})
}
