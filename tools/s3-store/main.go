// An S3-compatible object store for the second tier: gofakes3 as rclone ships it (the server behind
// `rclone serve s3`), holding objects in memory and taking only requests signed with AWS Signature
// Version 4 by the one key pair it is given (S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY). It listens on
// --listen, creates --bucket, and prints the address it listens on as its first line.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/rclone/gofakes3"
	"github.com/rclone/gofakes3/s3mem"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "the address to listen on")
	bucket := flag.String("bucket", "", "a bucket to create at start")
	flag.Parse()
	access, secret := os.Getenv("S3_ACCESS_KEY_ID"), os.Getenv("S3_SECRET_ACCESS_KEY")
	if access == "" || secret == "" {
		log.Fatal("S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required")
	}
	backend := s3mem.New()
	if *bucket != "" {
		if err := backend.CreateBucket(context.Background(), *bucket); err != nil {
			log.Fatal(err)
		}
	}
	store := gofakes3.New(backend, gofakes3.WithV4Auth(map[string]string{access: secret}))
	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(listener.Addr().String())
	log.Fatal(http.Serve(listener, store.Server()))
}
