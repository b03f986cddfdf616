package diag

// "Did you mean" suggestions, decided the way HAProxy decides them: a word
// is summarised by the transitions between consecutive character classes
// (26 letters folded to lower case, digits, everything else), including the
// transitions from the beginning and to the end of the word, and two words
// are as far apart as their summaries differ cell by cell. The summary
// ignores the order of transitions, so swapped letters ("wieght") stay close
// to the original while unrelated words of the same length do not.

// Fingerprint summarises one or more words. Cell 32*from+to counts the
// transitions from class <from> to class <to>; classes are 1..26 for the
// letters a..z, 27 for a digit and 28 for any other byte as well as for the
// beginning and end of a word. Row 0 marks which classes occur at all.
// Counters are bytes and wrap as HAProxy's do, which only matters for words
// repeating one transition more than 255 times.
type Fingerprint [1024]uint8

const (
	fpDigit = 27
	fpOther = 28 // also the beginning and the end of a word
)

func fpClass(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 1
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 1
	case c >= '0' && c <= '9':
		return fpDigit
	}
	return fpOther
}

// Add accumulates word into f. Several words added to the same fingerprint
// describe a multi-word command, as the CLI's suggestions compare them.
func (f *Fingerprint) Add(word string) {
	from := fpOther
	for i := 0; i < len(word); i++ {
		to := fpClass(word[i])
		f[to] = 1
		f[32*from+to]++
		from = to
	}
	f[32*from+fpOther]++
}

// Reset clears f for reuse.
func (f *Fingerprint) Reset() { *f = Fingerprint{} }

// WordFingerprint returns the fingerprint of a single word.
func WordFingerprint(word string) Fingerprint {
	var f Fingerprint
	f.Add(word)
	return f
}

// Distance is the sum over all cells of the absolute differences between a
// and b: zero for words with the same transitions, growing with each
// transition one has and the other lacks.
func Distance(a, b *Fingerprint) int {
	d := 0
	for i := range a {
		k := int(a[i]) - int(b[i])
		if k < 0 {
			k = -k
		}
		d += k
	}
	return d
}

// BestMatch returns the candidate closest to word, or "" when even the
// closest one is too far to be a plausible misspelling: farther than twice
// the length of word or twice its own length. On equal distances the
// earlier candidate wins, so callers should list candidates in the order of
// their keyword tables.
func BestMatch(word string, candidates []string) string {
	wf := WordFingerprint(word)
	best, bestDist := "", -1
	var cf Fingerprint
	for _, c := range candidates {
		cf.Reset()
		cf.Add(c)
		if d := Distance(&wf, &cf); bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > 2*len(word) || bestDist > 2*len(best) {
		return ""
	}
	return best
}
