//go:build !amd64 || !gc || purego

package aesni

const hasAESNI = false

func expand128(*[16]byte, *[11][16]byte) { panic("aesni: no AES-NI here") }
func prf64(*[11][16]byte, uint64) uint64 { panic("aesni: no AES-NI here") }
func prf64x8(*[11][16]byte, *[8]uint64)  { panic("aesni: no AES-NI here") }

func expand256(*[32]byte, *[15][16]byte) { panic("aesni: no AES-NI here") }
func encrypt256(*[15][16]byte, uint64, uint64) (uint64, uint64) {
	panic("aesni: no AES-NI here")
}
