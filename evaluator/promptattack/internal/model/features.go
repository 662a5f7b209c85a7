// Package model is the prompt-attack classifier's model: the features it reads from text, the blocks and
// windows text is scored in, the linear heads, and the weights file. The evaluator (package promptattack)
// scores with it and the training program (promptattack/train) fits it, so both see text the same way.
package model

// Bits is log2 of the number of hashed feature buckets.
const Bits = 18

// Buckets is the number of hashed feature buckets.
const Buckets = 1 << Bits

// BlockSize is the length in bytes from which a block ends at the next whitespace; MaxBlock is where it
// ends regardless. Blocks are the unit text is cut into; features never cross a block boundary, so a block's
// features are computed once and shared by every window that holds it.
const (
	BlockSize = 256
	MaxBlock  = 320
)

// WindowBlocks is how many consecutive blocks make one scored window (about 1 KiB). Windows slide by one
// block; text of at most WindowBlocks blocks is one window.
const WindowBlocks = 4

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

// setSize is the size of the open-addressing set a block's features are deduplicated in: a power of two
// above twice the most features a block of MaxBlock bytes can have (3 n-grams and 2 word features per byte
// at most, but words are at least one byte apart, so about 4 per byte).
const setSize = 4096

// Extractor computes the features of blocks. It holds the scratch space, so it is not safe for concurrent
// use; the zero value is ready.
type Extractor struct {
	set   [setSize]uint32 // bucket+1 of the features seen in the current block; 0 = empty
	feats []uint32
}

// Block returns the buckets of the distinct features of block: character 3-, 4- and 5-grams of the
// folded text (runs of whitespace folded to one space, a space before the first byte) and word unigrams
// and bigrams. A feature counts once per block however often it occurs, so that repetition (a table of
// numbers, a flood of one token) does not outweigh content. The slice is valid until the next call.
func (e *Extractor) Block(block string) []uint32 {
	clear(e.set[:])
	all := appendBlock(e.feats[:0], block)
	out := all[:0]
	for _, f := range all {
		i := (f * 0x9e3779b1) >> (32 - 12) // setSize = 1<<12
		for {
			v := e.set[i]
			if v == 0 {
				e.set[i] = f + 1
				out = append(out, f)
				break
			}
			if v == f+1 {
				break
			}
			i = (i + 1) & (setSize - 1)
		}
	}
	e.feats = all
	return out
}

// appendBlock appends the bucket of every feature of block to dst, duplicates included.
func appendBlock(dst []uint32, block string) []uint32 {
	var win uint64 = ' ' // the last five folded bytes; a leading space marks the start of the block
	seen := 1
	prevSpace := true
	var word, prevWord uint64
	inWord := false
	endWord := func() {
		dst = append(dst, bucket(word^saltUnigram))
		if prevWord != 0 {
			dst = append(dst, bucket((prevWord*0x100000001b3)^word^saltBigram))
		}
		prevWord = word
		inWord = false
	}
	for i := 0; i < len(block); i++ {
		c := fold[block[i]]
		if c == ' ' {
			if inWord {
				endWord()
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
				endWord()
			}
		}
		win = win<<8 | uint64(c)
		seen++
		if seen >= 3 {
			dst = append(dst, bucket(win&0xffffff|3<<40))
		}
		if seen >= 4 {
			dst = append(dst, bucket(win&0xffffffff|4<<40))
		}
		if seen >= 5 {
			dst = append(dst, bucket(win&0xffffffffff|5<<40))
		}
	}
	if inWord {
		endWord()
	}
	return dst
}
