package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
)

// Contract is what an image built from a Dockerfile promises those who run it, as its final
// stage states it: the program the entrypoint runs, the user and the entrypoint. The public
// build (the Dockerfile) and the local one (build.sh, from the Containerfile this package writes)
// must agree on it.
type Contract struct {
	// Program is the absolute path of the program the entrypoint runs; the final stage copies a
	// file there.
	Program string
	// User is the USER of the final stage, as written (e.g. "65532:65532").
	User string
	// Entrypoint is the exec-form ENTRYPOINT of the final stage.
	Entrypoint []string
}

// instruction is one Dockerfile instruction: its keyword, upper-cased, and the rest of the line,
// continuation lines joined.
type instruction struct {
	keyword string
	args    string
}

// readInstructions splits a Dockerfile into instructions, dropping comments and joining lines
// that end with a backslash.
func readInstructions(r io.Reader) ([]instruction, error) {
	var (
		out     []instruction
		pending strings.Builder
	)
	scanner := bufio.NewScanner(r)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if strings.HasPrefix(line, "#") || (line == "" && pending.Len() == 0) {
			continue
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			pending.WriteString(cont + " ")
			continue
		}
		pending.WriteString(line)
		keyword, args, _ := strings.Cut(strings.TrimSpace(pending.String()), " ")
		out = append(out, instruction{keyword: strings.ToUpper(keyword), args: strings.TrimSpace(args)})
		pending.Reset()
	}
	return out, scanner.Err()
}

// parseDockerfile reads the contract of the final stage of a Dockerfile. The final stage must
// state USER and an exec-form ENTRYPOINT, and COPY or ADD the entrypoint's program: a contract
// inherited from a base image cannot be checked here, so it is refused.
func parseDockerfile(r io.Reader) (Contract, error) {
	instructions, err := readInstructions(r)
	if err != nil {
		return Contract{}, err
	}
	var (
		c       Contract
		workdir = "/"
		copied  []string // destinations of the final stage's COPY and ADD, resolved
		stages  int
	)
	for _, in := range instructions {
		switch in.keyword {
		case "FROM":
			stages++
			c, workdir, copied = Contract{}, "/", nil
		case "WORKDIR":
			workdir = path.Join(workdir, in.args)
			if path.IsAbs(in.args) {
				workdir = path.Clean(in.args)
			}
		case "USER":
			c.User = in.args
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(in.args), &c.Entrypoint); err != nil || len(c.Entrypoint) == 0 {
				return Contract{}, fmt.Errorf("ENTRYPOINT %s: only the exec form (a JSON array) is supported", in.args)
			}
		case "COPY", "ADD":
			dest, err := copyDestinations(in.args, workdir)
			if err != nil {
				return Contract{}, fmt.Errorf("%s %s: %w", in.keyword, in.args, err)
			}
			copied = append(copied, dest...)
		}
	}
	switch {
	case stages == 0:
		return Contract{}, fmt.Errorf("no FROM: not a Dockerfile")
	case c.User == "":
		return Contract{}, fmt.Errorf("the final stage has no USER")
	case len(c.Entrypoint) == 0:
		return Contract{}, fmt.Errorf("the final stage has no ENTRYPOINT")
	}
	c.Program = c.Entrypoint[0]
	for _, dest := range copied {
		if dest == c.Program {
			return c, nil
		}
	}
	return Contract{}, fmt.Errorf("the final stage copies nothing to %s, the entrypoint's program (it copies to %v)", c.Program, copied)
}

// copyDestinations resolves where the sources of a COPY or ADD land: SOURCE... DEST, flags
// (--from, --chown, ...) ignored. A destination that is a directory ("." or ending in "/")
// receives each source under its base name.
func copyDestinations(args, workdir string) ([]string, error) {
	var words []string
	if strings.HasPrefix(args, "[") {
		if err := json.Unmarshal([]byte(args), &words); err != nil {
			return nil, err
		}
	} else {
		for _, w := range strings.Fields(args) {
			if !strings.HasPrefix(w, "--") {
				words = append(words, w)
			}
		}
	}
	if len(words) < 2 {
		return nil, fmt.Errorf("want sources and a destination")
	}
	sources, dest := words[:len(words)-1], words[len(words)-1]
	isDir := dest == "." || strings.HasSuffix(dest, "/") || len(sources) > 1
	if !path.IsAbs(dest) {
		dest = path.Join(workdir, dest)
	}
	var out []string
	for _, src := range sources {
		if isDir {
			out = append(out, path.Join(dest, path.Base(src)))
		} else {
			out = append(out, path.Clean(dest))
		}
	}
	return out, nil
}

// containerfile writes the Containerfile of the local build of an image with contract c, from
// dockerfile: FROM scratch, the files of distroless/static the programs may use (rootfs/, made
// by build.sh) and the program, cross-compiled by build.sh into <os>-<arch>/ of the context.
func containerfile(w io.Writer, c Contract, dockerfile string) error {
	entrypoint, err := json.Marshal(c.Entrypoint)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, `# Generated by hack/images/contract from %s: its final stage's program, user and entrypoint,
# FROM scratch with the files of distroless/static in rootfs/, and the program cross-compiled by
# hack/images/build.sh into <os>-<arch>/.
FROM scratch
ARG TARGETOS
ARG TARGETARCH
COPY rootfs/ /
COPY ${TARGETOS}-${TARGETARCH}/%s %s
USER %s
ENTRYPOINT %s
`, dockerfile, path.Base(c.Program), c.Program, c.User, entrypoint)
	return err
}
