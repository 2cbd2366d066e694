package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/cauri-pay/cauri"
)

// linkCommand is `cauri link deactivate|activate --workspace ID LINK_ID`:
// what the dashboard's switch on the links page does, from the command line.
func linkCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "activate" && args[0] != "deactivate" {
		return errors.New("link: want a subcommand: activate or deactivate")
	}
	fs := flag.NewFlagSet("link "+args[0], flag.ContinueOnError)
	workspaceID := fs.String("workspace", "", "workspace id (required)")
	cfg, pos, err := parseFlags(fs, args[1:], getenv, stderr)
	if err != nil {
		return err
	}
	if *workspaceID == "" || len(pos) != 1 {
		return fmt.Errorf("link %s: want --workspace ID and exactly one link id", args[0])
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	l, err := st.UpdateLink(ctx, *workspaceID, pos[0], func(l *cauri.PaymentLink) error {
		l.Active, l.UpdatedAt = args[0] == "activate", time.Now().UTC()
		return nil
	})
	if err != nil {
		return errors.New(cauri.ErrorMessage(err))
	}
	return printJSON(stdout, map[string]any{"id": l.ID, "slug": l.Slug, "title": l.Title, "active": l.Active})
}
