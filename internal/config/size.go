package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// sizeUnits are the units ParseSize accepts, by lower-case name: decimal
// (KB = 1000 bytes) and binary (KiB = 1024 bytes).
var sizeUnits = map[string]int64{
	"b":  1,
	"kb": 1000, "kib": 1 << 10,
	"mb": 1000 * 1000, "mib": 1 << 20,
	"gb": 1000 * 1000 * 1000, "gib": 1 << 30,
}

// sizeUnitList names the units for messages.
const sizeUnitList = "B, KB, KiB, MB, MiB, GB or GiB"

// ParseSize reads a size in bytes: a whole number, optionally followed by
// a unit — B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of
// 1024) — in any case, with or without a space: "1048576", "512KiB",
// "1 MiB", "2gb". Signs, fractions and other units are errors.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("size is empty")
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid size %q: want a whole number of bytes, optionally followed by %s", s, sizeUnitList)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	unit := strings.TrimLeft(t[i:], " ")
	mult := int64(1)
	if unit != "" {
		m, ok := sizeUnits[strings.ToLower(unit)]
		if !ok {
			return 0, fmt.Errorf("invalid size %q: unknown unit %q; use %s", s, unit, sizeUnitList)
		}
		mult = m
	}
	if n > 0 && mult > 1 && n > (1<<63-1)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

// formatSize renders a size the way a person writes it, in a form that
// ParseSize reads back: 1MiB, 512KiB, 1500B.
func formatSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
