package devagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo/engine/toolloop"
	"github.com/brabo-dev/brabo/model"
)

// MaxReadBytes bounds what read_file returns of one file.
const MaxReadBytes = 256 << 10

// ReadFileTool is the direct read_file tool {path}: it reads a file under
// root, the project's scope root. A path outside root (compared lexically:
// "..", an absolute path elsewhere) is refused; rootErr, when the scope
// root could not be found, is what every call answers.
func ReadFileTool(root string, rootErr error) toolloop.Tool {
	return toolloop.Tool{
		Spec: model.Tool{
			Name:        "read_file",
			Description: "Read a file of the project folder.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"file path, relative to the project folder"}},` +
				`"required":["path"],"additionalProperties":false}`),
		},
		Kind: toolloop.Direct,
		Direct: func(ctx context.Context, args json.RawMessage) (string, error) {
			if rootErr != nil {
				return "", fmt.Errorf("the project folder is not available: %v", rootErr)
			}
			var a struct {
				Path string `json:"path"`
			}
			dec := json.NewDecoder(bytes.NewReader(args))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&a); err != nil {
				return "", fmt.Errorf("the arguments do not fit the schema: %v", err)
			}
			full, err := inScope(root, a.Path)
			if err != nil {
				return "", err
			}
			f, err := os.Open(full)
			if err != nil {
				return "", fmt.Errorf("%s: %v", a.Path, errors.Unwrap(err))
			}
			defer f.Close()
			data, err := io.ReadAll(io.LimitReader(f, MaxReadBytes+1))
			if err != nil {
				return "", fmt.Errorf("%s: %v", a.Path, err)
			}
			if len(data) > MaxReadBytes {
				return string(data[:MaxReadBytes]) + fmt.Sprintf("\n[truncated at %d bytes]", MaxReadBytes), nil
			}
			return string(data), nil
		},
	}
}

// inScope resolves path under root lexically and refuses what leaves it.
// Symbolic links are not followed here.
func inScope(root, path string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", errors.New("path is required")
	}
	if root == "" || !filepath.IsAbs(root) {
		return "", fmt.Errorf("the project folder %q is not an absolute path", root)
	}
	root = filepath.Clean(root)
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(root, full)
	}
	full = filepath.Clean(full)
	rel, err := filepath.Rel(root, full)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the project folder", path)
	}
	return full, nil
}
