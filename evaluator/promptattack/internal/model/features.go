// Package model is the prompt-attack classifier's model: the features it reads from text, the blocks and
// windows text is scored in, the linear heads, and the weights file. The evaluator (package promptattack)
// scores with it and the training program (promptattack/train) fits it, so both see text the same way.
package model

import "slices"

// Bits is log2 of the number of hashed feature buckets.
const Bits = 18

// Buckets is the number of hashed feature buckets.
const Buckets = 1 << Bits

// BlockSize is the length in bytes from which a block ends at the next whitespace; MaxBlock is where it
// ends regardless. Blocks are the unit text is cut into; features never cross a block boundary, so a block's
// features are computed once and shared by every window that holds it.
const (
	BlockSize = 128
	MaxBlock  = 192
)

// WindowBlocks is the most consecutive blocks one scored window holds (about 1 KiB). Windows slide by one
// block; text of at most a head's window size is one window.
const WindowBlocks = 8

// HeadWindow is the window size of each head, in blocks: the prompt heads read about 1 KiB (a jailbreak
// spreads over paragraphs), the indirect head about 256 bytes (an instruction hidden in a document is a
// sentence or two, which the document around it would dilute in a larger window).
var HeadWindow = [K]int{8, 8, 8, 2}

// NextBlock returns the end of the block that starts at start: the first whitespace at or after
// start+BlockSize (the whitespace byte belongs to the block), or start+MaxBlock, or the end of text.
func NextBlock(text string, start int) int {
	end := start + BlockSize
	if end >= len(text) {
		return len(text)
	}
	limit := min(start+MaxBlock, len(text))
	for i := end; i < limit; i++ {
		switch text[i] {
		case ' ', '\n', '\t', '\r':
			return i + 1
		}
	}
	return limit
}

// fold maps a byte to what the character n-grams see: ASCII letters lower-cased, every digit '0' (numbers
// carry no attack signal but vary endlessly), every whitespace byte a space; other bytes as they are
// (UTF-8 continuation bytes included, so non-ASCII text still yields n-grams).
var fold = func() (t [256]byte) {
	for i := range t {
		b := byte(i)
		switch {
		case b >= 'A' && b <= 'Z':
			b += 'a' - 'A'
		case b >= '0' && b <= '9':
			b = '0'
		case b == '\n' || b == '\t' || b == '\r' || b == '\f' || b == '\v':
			b = ' '
		}
		t[i] = b
	}
	return t
}()

// wordByte reports whether a folded byte is part of a word for the word features.
var wordByte = func() (t [256]bool) {
	for i := range t {
		b := byte(i)
		t[i] = (b >= 'a' && b <= 'z') || b == '0' || b == '\'' || b >= 0x80
	}
	return t
}()

// Salts keep the feature kinds apart in the shared hash space.
const (
	saltUnigram = 0x51ed270b27a3c1d9
	saltBigram  = 0x2545f4914f6cdd1d
)

// bucket maps a 64-bit feature key to a bucket (Fibonacci hashing: the high bits of a multiply).
func bucket(x uint64) uint32 {
	x ^= x >> 29
	return uint32((x * 0x9e3779b97f4a7c15) >> (64 - Bits))
}

// setBits is log2 of the size of the open-addressing set a block's features are deduplicated in: a power
// of two above twice the most features a block of MaxBlock bytes can have (3 n-grams per byte and 2 word
// features per word, a word taking at least two bytes with its separator: 4 per byte).
const (
	setBits = 11
	setSize = 1 << setBits
)

// Extractor computes the features of blocks. It holds the scratch space, so it is not safe for concurrent
// use; the zero value is ready.
type Extractor struct {
	// set holds, per slot, the generation of the block that filled it (high bits) and the bucket+1 (low
	// Bits+1 bits); a slot of an older generation is empty, so the set need not be cleared per block.
	set   [setSize]uint32
	gen   uint32
	feats []uint32
}

// genShift is where the generation starts in a set slot.
const genShift = Bits + 1

// Block returns the buckets of the distinct features of block: character 3-, 4- and 5-grams of the
// folded text (runs of whitespace folded to one space, a space before the first byte) and word unigrams
// and bigrams. A feature counts once per block however often it occurs, so that repetition (a table of
// numbers, a flood of one token) does not outweigh content. The slice is valid until the next call.
func (e *Extractor) Block(block string) []uint32 {
	e.gen++
	if e.gen >= 1<<(32-genShift) {
		clear(e.set[:])
		e.gen = 1
	}
	tag := e.gen << genShift
	all := appendBlock(e.feats[:0], block)
	out := all[:0]
	for _, f := range all {
		want := tag | (f + 1)
		i := (f * 0x9e3779b1) >> (32 - setBits)
		for {
			v := e.set[i]
			if v == want {
				break
			}
			if v < tag { // empty in this generation
				e.set[i] = want
				out = append(out, f)
				break
			}
			i = (i + 1) & (setSize - 1)
		}
	}
	e.feats = all
	return out
}

// blockSums returns what block contributes to a window: the sum of the packed weights of its distinct
// features per head, and their number. It deduplicates exactly as Block does, in the same pass as the
// weight lookups (Score's hot path; Block serves training).
func (e *Extractor) blockSums(block string, w *[Buckets]uint32) (sum [K]int32, n int32) {
	e.gen++
	if e.gen >= 1<<(32-genShift) {
		clear(e.set[:])
		e.gen = 1
	}
	tag := e.gen << genShift
	all := appendBlock(e.feats[:0], block)
	e.feats = all
	var s0, s1, s2, s3 int32
	for _, f := range all {
		want := tag | (f + 1)
		i := (f * 0x9e3779b1) >> (32 - setBits)
		for {
			v := e.set[i]
			if v == want {
				break
			}
			if v < tag {
				e.set[i] = want
				n++
				x := w[f&(Buckets-1)]
				s0 += int32(int8(x))
				s1 += int32(int8(x >> 8))
				s2 += int32(int8(x >> 16))
				s3 += int32(int8(x >> 24))
				break
			}
			i = (i + 1) & (setSize - 1)
		}
	}
	return [K]int32{s0, s1, s2, s3}, n
}

// appendBlock appends the bucket of every feature of block to dst, duplicates included.
func appendBlock(dst []uint32, block string) []uint32 {
	dst = slices.Grow(dst, 5*len(block)+8) // at most 3 n-grams and 2 word features per byte
	var win uint64 = ' '                   // the last five folded bytes; a leading space marks the start of the block
	seen := 1
	prevSpace := true
	var word, prevWord uint64
	inWord := false
	for i := 0; i < len(block); i++ {
		c := fold[block[i]]
		if c == ' ' {
			if inWord {
				dst, prevWord = endWord(dst, word, prevWord)
				inWord = false
			}
			if prevSpace {
				continue
			}
			prevSpace = true
		} else {
			prevSpace = false
			if wordByte[c] {
				if !inWord {
					word = 0xcbf29ce484222325
					inWord = true
				}
				word = (word ^ uint64(c)) * 0x100000001b3
			} else if inWord {
				dst, prevWord = endWord(dst, word, prevWord)
				inWord = false
			}
		}
		win = win<<8 | uint64(c)
		seen++
		if seen >= 5 {
			dst = append(dst, bucket(win&0xffffff|3<<40), bucket(win&0xffffffff|4<<40), bucket(win&0xffffffffff|5<<40))
			continue
		}
		if seen >= 3 {
			dst = append(dst, bucket(win&0xffffff|3<<40))
		}
		if seen >= 4 {
			dst = append(dst, bucket(win&0xffffffff|4<<40))
		}
	}
	if inWord {
		dst, _ = endWord(dst, word, prevWord)
	}
	return dst
}

// endWord appends the features of a finished word (its unigram, and its bigram with the word before it)
// and returns the word as the next one's predecessor.
func endWord(dst []uint32, word, prevWord uint64) ([]uint32, uint64) {
	dst = append(dst, bucket(word^saltUnigram))
	if prevWord != 0 {
		dst = append(dst, bucket((prevWord*0x100000001b3)^word^saltBigram))
	}
	return dst, word
}
