package model

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// magic and formatVersion open every weights file; a reader refuses any other format.
const (
	magic         = "GPAK"
	formatVersion = 1
)

// Marshal encodes m in the weights format (uncompressed): magic, format version, Bits, K, the class
// names, biases and scales, the operating points, the info text and the int8 weights. The encoding is
// fixed (little-endian, no maps), so the same model always gives the same bytes.
func Marshal(m *Model) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	u32 := func(v uint32) { _ = binary.Write(&b, binary.LittleEndian, v) }
	f64 := func(v float64) { u32(uint32(math.Float64bits(v))); u32(uint32(math.Float64bits(v) >> 32)) }
	str := func(s string) { u32(uint32(len(s))); b.WriteString(s) }
	u32(formatVersion)
	u32(Bits)
	u32(K)
	for c := range K {
		str(m.Classes[c])
		f64(m.Bias[c])
		f64(m.Scale[c])
	}
	u32(uint32(len(m.Points)))
	for _, p := range m.Points {
		str(p.Name)
		for c := range K {
			f64(p.Logit[c])
		}
	}
	str(m.Info)
	for _, w := range m.Weights {
		b.WriteByte(byte(w))
	}
	return b.Bytes()
}

// Compress gzips an encoded model with a header that carries no time or name, so that the file depends on
// the model alone.
func Compress(raw []byte) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = zw.Write(raw)
	_ = zw.Close()
	return b.Bytes()
}

// Decompress reverses Compress, refusing more than limit bytes of output.
func Decompress(gz []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > limit {
		return nil, errors.New("weights file too large")
	}
	return raw, nil
}

// Unmarshal decodes what Marshal wrote.
func Unmarshal(raw []byte) (*Model, error) {
	r := bytes.NewReader(raw)
	var err error
	u32 := func() uint32 {
		var v uint32
		if err == nil {
			err = binary.Read(r, binary.LittleEndian, &v)
		}
		return v
	}
	f64 := func() float64 { lo := u32(); hi := u32(); return math.Float64frombits(uint64(hi)<<32 | uint64(lo)) }
	str := func() string {
		n := u32()
		if err != nil || int(n) > r.Len() {
			err = errors.Join(err, errors.New("truncated string"))
			return ""
		}
		s := make([]byte, n)
		_, _ = io.ReadFull(r, s)
		return string(s)
	}
	head := make([]byte, len(magic))
	if _, e := io.ReadFull(r, head); e != nil || string(head) != magic {
		return nil, errors.New("not a prompt-attack weights file")
	}
	if v := u32(); v != formatVersion {
		return nil, fmt.Errorf("weights format %d, want %d", v, formatVersion)
	}
	if bits, k := u32(), u32(); err == nil && (bits != Bits || k != K) {
		return nil, fmt.Errorf("weights for %d bits and %d heads, want %d and %d", bits, k, Bits, K)
	}
	m := &Model{}
	for c := range K {
		m.Classes[c] = str()
		m.Bias[c] = f64()
		m.Scale[c] = f64()
	}
	np := u32()
	if np > 64 {
		return nil, errors.New("too many operating points")
	}
	for range np {
		p := Point{Name: str()}
		for c := range K {
			p.Logit[c] = f64()
		}
		m.Points = append(m.Points, p)
	}
	m.Info = str()
	if err != nil {
		return nil, fmt.Errorf("weights file: %w", err)
	}
	if r.Len() != Buckets*K {
		return nil, fmt.Errorf("weights file holds %d weights, want %d", r.Len(), Buckets*K)
	}
	m.Weights = make([]int8, Buckets*K)
	rest := raw[len(raw)-r.Len():]
	for i, b := range rest {
		m.Weights[i] = int8(b)
	}
	m.Pack()
	return m, nil
}
