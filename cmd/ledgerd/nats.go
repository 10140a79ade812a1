package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ledgervenue/node/net/replicate"
)

// natsMain runs `ledgerd nats`: a NATS server with JetStream on its own,
// for a leader and followers on one machine that must outlive any of them
// (the replication benchmark, a failover tried by hand). A deployment runs
// nats-server, a cluster with replicated streams.
func natsMain(args []string) int {
	fs := flag.NewFlagSet("ledgerd nats", flag.ExitOnError)
	host := fs.String("host", "127.0.0.1", "listen host")
	port := fs.Int("port", 4222, "listen port (0: any free port)")
	dir := fs.String("datadir", "./data-nats", "JetStream storage directory")
	fs.Parse(args)
	s, err := replicate.StartServer(*dir, *host, *port)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledgerd nats:", err)
		return 1
	}
	fmt.Printf("nats listening on %s (JetStream in %s)\n", s.ClientURL(), *dir)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	s.Shutdown()
	s.WaitForShutdown()
	return 0
}
