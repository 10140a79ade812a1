// Package secp recovers secp256k1 ECDSA public keys, fast and without cgo.
//
// It does one thing, Recover, and does it in variable time: every input
// (hash, signature) is public. It must never be used with secret scalars.
//
// # Model
//
// Recover computes Q = r^-1 (s*R - z*G), R being the curve point with
// x = r and the y parity given by the recovery id, as u1*G + u2*R with
// u1 = -z/r and u2 = s/r. The cost is dominated by that double scalar
// multiplication, done Strauss-style: one shared chain of 129 doublings
// with four interleaved wNAF digit streams.
//
//	u2 = k1 + k2*lambda   (GLV: lambda*(x, y) = (beta*x, y), |k1|,|k2| < 2^128)
//	u1 = lo + hi*2^128
//
//	stream  scalar  table (odd multiples)        built
//	------  ------  ---------------------------  ----------------------------
//	1       k1      R, 3R, ..., 15R     (w = 5)  per call, no inversion
//	2       k2      lambda * stream 1's table    per call, 8 multiplies
//	3       lo      G, 3G, ..., 511G    (w = 10) once, lazily (sync.Once)
//	4       hi      same for 2^128 * G           once, lazily
//
// The per-call tables are built on a curve isomorphic to secp256k1,
// (x, y) -> (x*u^2, y*u^3), chosen so that all entries share one z: they
// can then be added with the cheaper mixed (Jacobian + affine) formula.
// The formulas never use b, so they work on any such curve; the
// accumulator lives there too, and the generator entries are moved onto it
// on the fly (addScaled). The result's z is multiplied by u at the end.
//
// Wider generator windows were measured: 12 and 14 bits execute the same
// number of instructions within 1% while the tables grow 4x and 16x, so the
// 32 KiB tables of w = 10 were kept.
//
// # Arithmetic
//
//   - fe, mod p = 2^256 - 2^32 - 977: four 64-bit limbs, weakly reduced
//     (< 2^256). Products fold the high half by 2^256 = 0x1000003d1 (mod p).
//     On amd64 with BMI2 and ADX, multiply and square are assembly
//     (field_amd64.s, MULX and two carry chains), about twice as fast as
//     the pure Go fallback; build with -tags purego to force the fallback.
//   - sc, mod the group order n: four limbs, fully reduced.
//   - Inversions (one mod p, one mod n per call) use variable-time
//     Bernstein-Yang divsteps (modinv.go), about 3x faster than Fermat.
//   - The square root for R is a fixed addition chain for x^((p+1)/4).
//
// # Invariants
//
//   - fe values are < 2^256; sc values are < n.
//   - GLV halves are below 2^128 (tested on 20k random and edge scalars;
//     splitLambda panics with "BUG" above 2^129, the wNAF capacity).
//   - Recover allocates nothing after the one-time table build.
package secp
