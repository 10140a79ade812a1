//go:build !amd64 || purego

package secp

// mul sets z = x*y.
func (z *fe) mul(x, y *fe) *fe { return z.mulGeneric(x, y) }

// sqr sets z = x*x.
func (z *fe) sqr(x *fe) *fe { return z.sqrGeneric(x) }
