package sqlstmt

import "testing"

func TestNumberPlaceholders(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                         "SELECT 1",
		"UPDATE t SET a = ? WHERE b = ?":   "UPDATE t SET a = $1 WHERE b = $2",
		"INSERT INTO t VALUES (?, ?, ?)":   "INSERT INTO t VALUES ($1, $2, $3)",
		"SELECT 'é' FROM t WHERE x IN (?)": "SELECT 'é' FROM t WHERE x IN ($1)",
	} {
		if got := NumberPlaceholders(in); got != want {
			t.Errorf("NumberPlaceholders(%q) = %q, want %q", in, got, want)
		}
	}
}
