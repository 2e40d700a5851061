package config

import "github.com/switchboard-mcp/switchboard/internal/config/schema"

// ParseSize reads a size in bytes: a whole number, optionally followed by
// a unit — B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of
// 1024) — in any case, with or without a space: "1048576", "512KiB",
// "1 MiB", "2gb". Signs, fractions and other units are errors.
func ParseSize(s string) (int64, error) { return schema.ParseSize(s) }

// formatSize renders a size the way a person writes it, in a form that
// ParseSize reads back: 1MiB, 512KiB, 1500B.
func formatSize(n int64) string { return schema.FormatSize(n) }
