package secrets

import (
	"context"
	"testing"
)

// The values below are made up for these tests (random, in each service's documented layout).

// TestBareFormats: a value whose format is distinctive is found with no key word near it, in prose, on its
// own, or in a sentence; the rule reported is gitleaks' rule for the service.
func TestBareFormats(t *testing.T) {
	e := build(t, nil)
	for _, tc := range []struct{ text, rule string }{
		{"eceedb8a4007b86b6c8a406719adef2d-us7", "mailchimp-api-key"},
		{"use d41f878293bdcc64b9b4f52526b5bf88-us19 for the newsletter sync", "mailchimp-api-key"},
		{"8414037891:AAY3N5kCnHQl3Es5gzI6px6-THaLaGQVJ7H", "telegram-bot-api-token"},
		{"the bot runs as 3140492:AA-7VdArGQo4Dis8fZvA9hMa2zSm66tU9R1 now", "telegram-bot-api-token"},
		{"MzQzMzYxNTMzODM4MDY3OTky.3gCe90.eeX550jJDvu-HsLbAz4mh4CeNBX", "discord-api-token"},
		{"client.login('NzgxNTI0MzE3MTg3ODQyNjYz.TB4KDl.KItF6mTUNA2JysMvM9oNBmtDavI')", "discord-api-token"},
		{"OTczMzkyNDc5NzA1MTY2OTkz.2tHjNn.L7nv8u2D2YtNnKFIa1qmw_3FnPv", "discord-api-token"},
		{"xoxp-2430590-73228097-284239878-cb997ad5a3852db362ccfd9814", "slack-user-token"},
		{"posting as xoxb-539822210-L9y2MvHZCr2H2Lwz8WE8dmam", "slack-bot-token"},
		{"https://deploy:ANNeMrmtRn0ZE2@git.example.com/team/app.git", "url-credentials"},
		{"postgres://orders:5IlWBU2WtNTGIIr01rsO@db.internal.example:5432/orders", "url-credentials"},
		{"curl https://user:pass@host/api", "url-credentials"},
		{"amqp://svc:hunter2@mq.example.net:5672/", "url-credentials"},
	} {
		fs, err := e.Scan(context.Background(), tc.text)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range fs {
			found = found || f.Rule == tc.rule
		}
		if !found {
			t.Errorf("%q: want %s, got %v", tc.text, tc.rule, fs)
		}
	}
}

// TestPlaceholdersAreNotSecrets: masks, filled-in runs of one character, and URL passwords that are the
// word password or a variable are documentation, not credentials.
func TestPlaceholdersAreNotSecrets(t *testing.T) {
	e := build(t, nil)
	for _, text := range []string{
		"AKIAZZZZZZZZZZZZZZZZ",
		"aws_access_key_id = AKIAXXXXXXXXXXXXXXXX",
		"artifactory_token: AP6xxxxxxxxxx",
		"api_key = sk_live_00000000000000000000000000",
		"mailchimp: 00000000000000000000000000000000-us5",
		"https://user:password@example.com/",
		"postgres://app:${DB_PASSWORD}@db:5432/app",
		"mongodb://admin:<password>@cluster0.example.net/",
		"https://bot:{{token}}@hooks.example.com/",
		"redis://:changeme@cache:6379/0",
		"https://ci:********@git.example.com/repo.git",
		"Read the docs at https://docs.example.com:443/guide and mail ops@example.com.",
		"ssh://git@github.com:org/repo.git",
		"Noting that NTSB and ODOT agreed, MTA staff said Nj transit and OT crews met.",
	} {
		fs, err := e.Scan(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) > 0 {
			t.Errorf("%q: want no secret, got %v", text, fs)
		}
	}
}
