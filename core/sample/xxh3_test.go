package sample

import "testing"

// TestXXH3 checks lengths on each side of the algorithm's size classes
// (0, 1-3, 4-8, 9-16, 17-128, 129-240, longer, several 1024-byte blocks)
// against what HAProxy 2.6.12's xxh3 converter gives for the bytes
// (i*7+3)%256, seeds 0, 1, -1 and 123456789.
func TestXXH3(t *testing.T) {
	seeds := []int64{0, 1, -1, 123456789}
	for _, tc := range []struct {
		n    int
		seed int // index in seeds
		want int64
	}{
		{0, 0, 3244421341483603138},
		{3, 1, 8719286942769176416},
		{8, 2, 273030086515015694},
		{16, 3, 3067091021020735682},
		{17, 0, 8163341949877205007},
		{128, 1, -201900325451554662},
		{129, 2, -1742298305579290365},
		{240, 0, 7229805477010515663},
		{241, 3, 107860753090543045},
		{1024, 0, -7241394453710343503},
		{1025, 1, 5935452155191065976},
		{5000, 2, -7601181426996823928},
	} {
		b := make([]byte, tc.n)
		for i := range b {
			b[i] = byte((i*7 + 3) % 256)
		}
		if got := int64(xxh3(b, uint64(seeds[tc.seed]))); got != tc.want {
			t.Errorf("len %d seed %d: %d, want %d", tc.n, seeds[tc.seed], got, tc.want)
		}
	}
}
