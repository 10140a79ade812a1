//go:build amd64 && !purego

package secp

import "golang.org/x/sys/cpu"

// useADX selects the assembly multiply and square, which need MULX (BMI2)
// and the two independent carry chains of ADCX/ADOX (ADX). They are about
// twice as fast as the pure Go versions, whose carries the compiler
// materialises through SBB/NEG pairs.
var useADX = cpu.X86.HasADX && cpu.X86.HasBMI2

// mul sets z = x*y.
func (z *fe) mul(x, y *fe) *fe {
	if useADX {
		mulADX(z, x, y)
		return z
	}
	return z.mulGeneric(x, y)
}

// sqr sets z = x*x.
func (z *fe) sqr(x *fe) *fe {
	if useADX {
		sqrADX(z, x)
		return z
	}
	return z.sqrGeneric(x)
}

//go:noescape
func mulADX(z, x, y *fe)

//go:noescape
func sqrADX(z, x *fe)
