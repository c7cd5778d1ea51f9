package support

import (
	"github.com/oaat-io/oaat-operator/hack/devkit"

	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// PrometheusBinary is the Prometheus server a suite runs: $PROMETHEUS, else prometheus on the PATH
// (Debian's package, which make system-packages installs). A suite fails without one: a metrics
// test that skips would pass by testing nothing.
func PrometheusBinary() (string, error) {
	if p := os.Getenv("PROMETHEUS"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("PROMETHEUS=%s: %w", p, err)
		}
		return p, nil
	}
	p, err := exec.LookPath("prometheus")
	if err != nil {
		return "", fmt.Errorf("no prometheus server on the PATH (%w): install the prometheus package "+
			"(make system-packages does) or name one in PROMETHEUS", err)
	}
	return p, nil
}

// StartPrometheus starts the Prometheus server binary with configFile, its TSDB in dataDir and its
// output in logPath, on a free loopback port, and returns the process and its base URL
// (http://127.0.0.1:PORT). It does not wait until the server is ready (CheckReady on /-/ready).
func StartPrometheus(binary, configFile, dataDir, logPath string, log io.Writer) (*devkit.Process, string, error) {
	proc, addr, err := startListening("prometheus", binary, func(addr string) []string {
		return []string{
			"--config.file=" + configFile,
			"--storage.tsdb.path=" + dataDir,
			"--web.listen-address=" + addr,
			"--log.level=info",
		}
	}, logPath, log)
	if err != nil {
		return nil, "", err
	}
	return proc, "http://" + addr, nil
}

// startListening starts the server binary on a free loopback port, with the arguments args gives
// for its address (127.0.0.1:PORT) and its output in logPath, and returns the process and that
// address.
func startListening(name, binary string, args func(addr string) []string, logPath string, log io.Writer) (*devkit.Process, string, error) {
	port, err := devkit.FreePort()
	if err != nil {
		return nil, "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	proc, err := devkit.StartProcess(devkit.ProcessSpec{Name: name, Binary: binary, Args: args(addr), LogPath: logPath, Log: log})
	if err != nil {
		return nil, "", err
	}
	return proc, addr, nil
}

// PromSample is one series of an instant vector.
type PromSample struct {
	Metric map[string]string
	Value  float64
}

// QueryPrometheus runs an instant query through the HTTP API of the Prometheus at baseURL and
// returns the vector.
func QueryPrometheus(ctx context.Context, baseURL, query string) ([]PromSample, error) {
	u := baseURL + "/api/v1/query?" + url.Values{"query": {query}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, http.NoBody)
	if err != nil {
		return nil, err
	}
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", query, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", query, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("query %s: %s: %s", query, resp.Status, body)
	}
	var answer struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("query %s: %w: %s", query, err, body)
	}
	if answer.Status != "success" || answer.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: status %s, result type %s: %s", query, answer.Status, answer.Data.ResultType, answer.Error)
	}
	samples := make([]PromSample, 0, len(answer.Data.Result))
	for _, r := range answer.Data.Result {
		s, ok := r.Value[1].(string)
		if !ok {
			return nil, fmt.Errorf("query %s: value %v", query, r.Value)
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %q: %w", query, s, err)
		}
		samples = append(samples, PromSample{Metric: r.Metric, Value: v})
	}
	return samples, nil
}
