// Checks gamelog's signed notes, cosignatures and consistency proofs with
// implementations gamelog did not write: Go's golang.org/x/mod/sumdb/note (signed
// notes, Ed25519) and golang.org/x/mod/sumdb/tlog (RFC 6962 consistency proofs), and
// Go's crypto/ed25519 for tlog-cosignature/v1 (which x/mod's note does not verify).
// Debian: golang-go, golang-golang-x-mod-dev. Build: GOPATH=/usr/share/gocode
// GO111MODULE=off go build -o interop ./tools/interop
//
// Usage:
//
//	interop note VERIFIER-KEY NOTE-FILE             the note's signature by that key verifies
//	interop cosignature WITNESS-KEY NOTE-FILE       a cosignature/v1 line of that witness verifies
//	interop consistency PROOF.json                  `gamelog proof --consistency --json` verifies
//
// Exit status 0 when it verifies, 1 when it does not, 2 on a usage error.
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: interop note|cosignature|consistency ...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "note":
		verifier, err := note.NewVerifier(os.Args[2])
		if err != nil {
			fail("verifier key: %v", err)
		}
		text, err := os.ReadFile(os.Args[3])
		if err != nil {
			fail("%v", err)
		}
		n, err := note.Open(text, note.VerifierList(verifier))
		if err != nil {
			fail("note: %v", err)
		}
		fmt.Printf("ok: %d verified, %d other signatures\n", len(n.Sigs), len(n.UnverifiedSigs))
	case "cosignature":
		// <name>+<key ID hex>+<base64(0x04 || key)>
		parts := strings.SplitN(strings.TrimSpace(os.Args[2]), "+", 3)
		if len(parts) != 3 {
			fail("witness key: not name+id+key")
		}
		raw, err := base64.StdEncoding.DecodeString(parts[2])
		if err != nil || len(raw) != 33 || raw[0] != 0x04 {
			fail("witness key: not a cosignature/v1 Ed25519 key")
		}
		key := ed25519.PublicKey(raw[1:])
		id := sha256.Sum256(append(append([]byte(parts[0]), '\n', 0x04), key...))
		text, err := os.ReadFile(os.Args[3])
		if err != nil {
			fail("%v", err)
		}
		split := bytes.Index(text, []byte("\n\n"))
		if split < 0 {
			fail("note: no blank line")
		}
		body := text[:split+1]
		for _, line := range strings.Split(string(text[split+2:]), "\n") {
			fields := strings.Fields(line)
			if len(fields) != 3 || fields[0] != "\u2014" || fields[1] != parts[0] {
				continue
			}
			stamp, err := base64.StdEncoding.DecodeString(fields[2])
			if err != nil || len(stamp) != 76 || !bytes.Equal(stamp[:4], id[:4]) {
				continue
			}
			seconds := binary.BigEndian.Uint64(stamp[4:12])
			message := append([]byte(fmt.Sprintf("cosignature/v1\ntime %d\n", seconds)), body...)
			if ed25519.Verify(key, message, stamp[12:]) {
				fmt.Printf("ok: witness %s cosigned at %d\n", parts[0], seconds)
				return
			}
			fail("witness %s: its cosignature does not verify", parts[0])
		}
		fail("no cosignature of witness %s", parts[0])
	case "consistency":
		var proof struct {
			From    int64    `json:"from"`
			To      int64    `json:"to"`
			OldRoot string   `json:"oldRoot"`
			NewRoot string   `json:"newRoot"`
			Proof   []string `json:"proof"`
		}
		text, err := os.ReadFile(os.Args[2])
		if err != nil {
			fail("%v", err)
		}
		if err := json.Unmarshal(text, &proof); err != nil {
			fail("proof: %v", err)
		}
		hash := func(s string) tlog.Hash {
			var h tlog.Hash
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil || len(b) != len(h) {
				fail("not a base64 hash: %q", s)
			}
			copy(h[:], b)
			return h
		}
		var p tlog.TreeProof
		for _, s := range proof.Proof {
			p = append(p, hash(s))
		}
		if err := tlog.CheckTree(p, proof.To, hash(proof.NewRoot), proof.From, hash(proof.OldRoot)); err != nil {
			fail("consistency: %v", err)
		}
		fmt.Printf("ok: %d extends %d\n", proof.To, proof.From)
	default:
		fmt.Fprintln(os.Stderr, "usage: interop note|cosignature|consistency ...")
		os.Exit(2)
	}
}
