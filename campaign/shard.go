package campaign

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is --shard i/n: a run checks the i-th of n parts of every cell's
// seeds (1 <= i <= n). The parts are blocks of --batch consecutive
// programs dealt out in turn (block k to shard k mod n + 1), so a toolchain
// producer assembles and links exactly the batches the unsharded run does
// (a batch's programs share one linked section), and the n shards together
// check every program of the unsharded run once.
type Shard struct {
	Index int `json:"index"` // 1-based
	Count int `json:"count"`
}

// ParseShard reads "i/n".
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	a, errA := strconv.Atoi(strings.TrimSpace(i))
	b, errB := strconv.Atoi(strings.TrimSpace(n))
	if !ok || errA != nil || errB != nil || b < 1 || a < 1 || a > b {
		return Shard{}, fmt.Errorf("--shard %q: want i/n with 1 <= i <= n, e.g. 2/4", s)
	}
	return Shard{Index: a, Count: b}, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Seeds are the seeds a cell checks: program j uses seed first+j, j <
// programs, and of those the shard keeps the blocks of batch programs
// that are its own. Without sharding (Count 0 or 1) that is every program.
func (s Shard) Seeds(first int64, programs, batch int) []int64 {
	var seeds []int64
	for j := 0; j < programs; j++ {
		if s.Count > 1 && (j/batch)%s.Count != s.Index-1 {
			continue
		}
		seeds = append(seeds, first+int64(j))
	}
	return seeds
}
