package integration

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// The model TestClusterChaos checks its register histories against
// (porcupine), and the report of a history that is not linearizable.

// regInput is an operation on register key: a write of value, or a read.
type regInput struct {
	key   int
	write bool
	value string
	node  int // the node the request went to (for the failure report)
}

// regOutput is what a read returned.
type regOutput struct{ value string }

// registerModel is a set of independent registers, each starting at "0".
var registerModel = porcupine.Model{
	Partition: byRegister,
	Init:      func() any { return "0" },
	Step: func(state, input, output any) (bool, any) {
		in := input.(regInput)
		if in.write {
			return true, in.value
		}
		return output.(regOutput).value == state.(string), state
	},
	DescribeOperation: func(input, output any) string {
		in := input.(regInput)
		if in.write {
			return fmt.Sprintf("write(%d, %s) via node %d", in.key, in.value, in.node+1)
		}
		return fmt.Sprintf("read(%d) -> %s via node %d", in.key, output.(regOutput).value, in.node+1)
	},
}

// byRegister splits a history by register, in the registers' order.
func byRegister(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[int][]porcupine.Operation{}
	for _, op := range history {
		k := op.Input.(regInput).key
		byKey[k] = append(byKey[k], op)
	}
	keys := slices.Sorted(maps.Keys(byKey))
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

// explainIllegal names, for each register whose history is not
// linearizable, the first operation (by call time) that no linearization
// of the longest prefix found could take, with the operations around it: CI
// keeps the test's output, not its files.
func explainIllegal(history []porcupine.Operation) string {
	var b strings.Builder
	for _, ops := range byRegister(history) {
		res, info := porcupine.CheckOperationsVerbose(porcupine.Model{Init: registerModel.Init, Step: registerModel.Step,
			DescribeOperation: registerModel.DescribeOperation}, ops, time.Minute)
		if res != porcupine.Illegal {
			continue
		}
		taken := map[int]bool{}
		var longest []int
		for _, p := range info.PartialLinearizations()[0] {
			if len(p) > len(longest) {
				longest = p
			}
		}
		for _, i := range longest {
			taken[i] = true
		}
		order := make([]int, len(ops))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, c int) bool { return ops[order[a]].Call < ops[order[c]].Call })
		stuck := 0
		for j, i := range order {
			if !taken[i] {
				stuck = j
				break
			}
		}
		fmt.Fprintf(&b, "\nregister %d: %d of its %d operations linearize; the first that does not, marked, among its neighbours (ms since the start):\n",
			ops[0].Input.(regInput).key, len(longest), len(ops))
		for j := max(0, stuck-15); j < min(len(order), stuck+10); j++ {
			op := ops[order[j]]
			ret := fmt.Sprintf("%.3f", float64(op.Return)/1e6)
			if op.Return == math.MaxInt64 {
				ret = "unknown"
			}
			mark := "  "
			if j == stuck {
				mark = "=>"
			}
			fmt.Fprintf(&b, "%s client %3d [%.3f, %s] %s\n", mark, op.ClientId, float64(op.Call)/1e6, ret,
				registerModel.DescribeOperation(op.Input, op.Output))
		}
	}
	return b.String()
}

// The checker itself: a history where a read misses a write that finished
// before the read began is rejected; the same history with the operations
// overlapping is accepted.
func TestRegisterCheckerRejectsAStaleRead(t *testing.T) {
	t.Parallel()
	stale := []porcupine.Operation{
		{ClientId: 0, Input: regInput{key: 1, write: true, value: "a"}, Call: 0, Return: 10},
		{ClientId: 1, Input: regInput{key: 1}, Output: regOutput{value: "0"}, Call: 20, Return: 30},
	}
	if porcupine.CheckOperations(registerModel, stale) {
		t.Fatal("the checker accepted a read that missed a finished write")
	}
	if got := explainIllegal(stale); !strings.Contains(got, "=> client   1 [0.000, 0.000] read(1) -> 0 via node 1") {
		t.Fatalf("the failure report does not point at the stale read:%s", got)
	}
	overlapping := []porcupine.Operation{
		{ClientId: 0, Input: regInput{key: 1, write: true, value: "a"}, Call: 0, Return: 25},
		{ClientId: 1, Input: regInput{key: 1}, Output: regOutput{value: "0"}, Call: 20, Return: 30},
	}
	if !porcupine.CheckOperations(registerModel, overlapping) {
		t.Fatal("the checker rejected a read concurrent with the write")
	}
	// A write whose outcome is unknown may take effect at any time after
	// its call, or never.
	unknown := []porcupine.Operation{
		{ClientId: 0, Input: regInput{key: 1, write: true, value: "a"}, Call: 0, Return: math.MaxInt64},
		{ClientId: 1, Input: regInput{key: 1}, Output: regOutput{value: "0"}, Call: 20, Return: 30},
		{ClientId: 1, Input: regInput{key: 1}, Output: regOutput{value: "a"}, Call: 40, Return: 50},
	}
	if !porcupine.CheckOperations(registerModel, unknown) {
		t.Fatal("the checker rejected an unknown-outcome write applied late")
	}
	unknown = append(unknown, porcupine.Operation{ClientId: 1, Input: regInput{key: 1}, Output: regOutput{value: "0"}, Call: 60, Return: 70})
	if porcupine.CheckOperations(registerModel, unknown) {
		t.Fatal("the checker accepted a register going back to an older value")
	}
}
