// Command contract keeps the images that hack/images/build.sh builds without a Docker engine to
// the contract of the Dockerfiles that stay the public build (./Dockerfile for the operator,
// tests/scorecard/Dockerfile for the custom scorecard tests): the program, the user and the
// entrypoint of the final stage. The Dockerfile is the one place the contract is written: the
// local build's Containerfile is generated from it, and the built image is checked against it.
//
// Usage:
//
//	contract program DOCKERFILE                      print the path of the entrypoint's program
//	contract containerfile DOCKERFILE                print the Containerfile of the local build
//	contract check DOCKERFILE LAYOUT PLATFORM...      check the image in OCI layout LAYOUT
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "contract: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: contract program|containerfile|check DOCKERFILE [LAYOUT PLATFORM...]")
	}
	command, dockerfile := args[0], args[1]
	c, err := readContract(dockerfile)
	if err != nil {
		return err
	}
	switch {
	case command == "program" && len(args) == 2:
		_, err = fmt.Println(c.Program)
		return err
	case command == "containerfile" && len(args) == 2:
		return containerfile(os.Stdout, c, dockerfile)
	case command == "check" && len(args) >= 4:
		if err := checkLayout(c, args[2], args[3:]); err != nil {
			return fmt.Errorf("the image in %s does not keep the contract of %s:\n%w", args[2], dockerfile, err)
		}
		fmt.Fprintf(os.Stderr, "contract: the image in %s keeps the contract of %s (%s, user %s) on %v\n", args[2], dockerfile, c.Program, c.User, args[3:])
		return nil
	}
	return fmt.Errorf("unknown command or wrong arguments: %v", args)
}

// readContract reads the contract of the Dockerfile at path.
func readContract(path string) (Contract, error) {
	f, err := os.Open(path)
	if err != nil {
		return Contract{}, err
	}
	defer func() { _ = f.Close() }()
	c, err := parseDockerfile(f)
	if err != nil {
		return Contract{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}
