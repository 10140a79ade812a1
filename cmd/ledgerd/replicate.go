package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/ledgervenue/node/net/replicate"
)

// replFlags are the flags of replication through NATS JetStream
// (docs/scaling.md).
type replFlags struct {
	nats        string
	follow      bool
	ack         string
	stream      string
	replicas    int
	leaseTTL    time.Duration
	autoPromote bool
	publicURL   string
	followers   int
}

func (f *replFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.nats, "nats", "", "replicate through the NATS JetStream server at this URL (nats://host:port): a leader publishes its log, a --follow node applies it (docs/scaling.md)")
	fs.BoolVar(&f.follow, "follow", false, "start as a follower of the stream at --nats: serve reads and subscriptions, refuse writes naming the leader, take over when the leader's lease lapses")
	fs.StringVar(&f.ack, "nats.ack", "local", "when a leader acknowledges a write: local (after its own fdatasync) or stream (after the stream holds it too: nothing acknowledged is lost in a failover)")
	fs.StringVar(&f.stream, "nats.stream", replicate.DefaultStream, "the JetStream stream's name (its subject is <name>.log, lower-cased)")
	fs.IntVar(&f.replicas, "nats.replicas", 1, "the stream's replicas (a JetStream cluster's; 1 on one server)")
	fs.DurationVar(&f.leaseTTL, "nats.lease-ttl", replicate.DefaultLeaseTTL, "how long the leader's lease outlives its last renewal (renewed every third of it); a follower takes over after it lapses")
	fs.BoolVar(&f.autoPromote, "nats.auto-promote", true, "a follower campaigns for the lease when it lapses (false: only admin_promote promotes it)")
	fs.StringVar(&f.publicURL, "public-url", "", "this node's URL as others should reach it: what the lease names, and what a follower's refusals point to (default http://<addr>)")
	fs.IntVar(&f.followers, "followers", 0, "start an embedded NATS server and this many follower processes beside this node (ports after --addr's, data under <datadir>/followers), and print their URLs")
}

// check refuses flag combinations replication cannot serve.
func (f *flags) checkRepl() error {
	r := &f.replFlags
	switch {
	case r.ack != "local" && r.ack != "stream":
		return fmt.Errorf("--nats.ack must be local or stream, got %q", r.ack)
	case r.follow && r.nats == "":
		return fmt.Errorf("--follow needs --nats")
	case r.followers < 0 || r.followers > 16:
		return fmt.Errorf("--followers must be 0..16")
	case r.followers > 0 && (r.follow || r.nats != ""):
		return fmt.Errorf("--followers starts its own NATS server and leads: leave out --follow and --nats")
	case r.follow && (f.bots != "" || f.l1 != "" || f.loadState != ""):
		return fmt.Errorf("a follower takes no writes of its own: leave out --bots, --l1 and --load-state (run them on the leader)")
	case (r.nats != "" || r.followers > 0) && f.loadState != "":
		return fmt.Errorf("--load-state replaces the whole state, which followers cannot follow: load it before replicating")
	case r.leaseTTL < 300*time.Millisecond:
		return fmt.Errorf("--nats.lease-ttl must be at least 300ms")
	}
	return nil
}

// startEmbeddedNATS starts the NATS server of --followers, storing under
// the data directory.
func startEmbeddedNATS(datadir string) (*server.Server, error) {
	return replicate.StartServer(filepath.Join(datadir, "nats"), "127.0.0.1", 0)
}

// newReplicator connects the node to the stream at url.
func newReplicator(f *flags, url, self string) (*replicate.Replicator, error) {
	r := &f.replFlags
	return replicate.New(replicate.Config{URL: url, Stream: r.stream, Replicas: r.replicas, LeaseTTL: r.leaseTTL,
		AckStream: r.ack == "stream", Self: self, AutoPromote: r.autoPromote, Logf: log.Printf})
}

// fixPort replaces port 0 of addr with a free port: the lease names the
// node's URL before its server listens.
func fixPort(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port != "0" {
		return addr, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	defer l.Close()
	return net.JoinHostPort(host, strconv.Itoa(l.Addr().(*net.TCPAddr).Port)), nil
}

// publicURL is the node's URL in the lease.
func (f *flags) publicURL(addr string) string {
	if f.replFlags.publicURL != "" {
		return f.replFlags.publicURL
	}
	return "http://" + addr
}

// followerProcs are the follower processes --followers started.
type followerProcs []*exec.Cmd

// startFollowers starts n followers of the stream at natsURL: this binary
// with the same genesis and wire flags, on the ports after the leader's.
func startFollowers(f *flags, n int, natsURL, leaderAddr string) (followerProcs, []string, error) {
	host, portStr, err := net.SplitHostPort(leaderAddr)
	if err != nil {
		return nil, nil, err
	}
	port, _ := strconv.Atoi(portStr)
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	base := childArgs(os.Args[1:], map[string]bool{"followers": true, "bots": true, "addr": true, "datadir": true,
		"admin-addr": true, "pprof": true, "l1": true, "dump-state": true, "load-state": true, "nats": true,
		"follow": true, "public-url": true, "admin-token": true})
	var procs followerProcs
	var urls []string
	for i := 1; i <= n; i++ {
		addr := net.JoinHostPort(host, strconv.Itoa(port+i))
		args := append(append([]string(nil), base...), "--follow", "--nats", natsURL, "--addr", addr,
			"--datadir", filepath.Join(f.datadir, "followers", strconv.Itoa(i)), "--admin-token", f.adminToken)
		cmd := exec.Command(exe, args...)
		cmd.Stdout = prefixed(fmt.Sprintf("[follower %d] ", i))
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			procs.stop()
			return nil, nil, fmt.Errorf("cannot start follower %d: %w", i, err)
		}
		procs = append(procs, cmd)
		urls = append(urls, "http://"+addr)
	}
	return procs, urls, nil
}

// stop ends the followers (SIGTERM: they close their stores) and waits.
func (p followerProcs) stop() {
	for _, c := range p {
		c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range p {
		c.Wait()
	}
}

// childArgs returns args without the flags named in drop (with their
// values).
func childArgs(args []string, drop map[string]bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		name, _, hasValue := strings.Cut(name, "=")
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
			continue
		}
		takesValue := false
		if fl := flag.CommandLine.Lookup(name); fl != nil {
			b, isBool := fl.Value.(interface{ IsBoolFlag() bool })
			takesValue = !(isBool && b.IsBoolFlag())
		}
		if drop[name] {
			if takesValue && !hasValue {
				i++
			}
			continue
		}
		out = append(out, a)
		if takesValue && !hasValue && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

// prefixed is a writer that prefixes each line written to stdout.
func prefixed(prefix string) io.Writer {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Println(prefix + sc.Text())
		}
	}()
	return pw
}
