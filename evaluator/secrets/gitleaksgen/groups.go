package main

import "strings"

// groups assigns gitleaks rules to guard's rule groups (the evaluator's rule_groups option) by rule id: the
// first entry whose prefix the id has wins. gitleaks has no such grouping; a rule not listed here is in
// "service" (the API keys of other hosted services).
var groups = []struct{ prefix, group string }{
	{"aws-amazon-bedrock-", "ai"},
	{"aws-", "cloud"}, {"gcp-", "cloud"}, {"azure-", "cloud"}, {"alibaba-", "cloud"}, {"digitalocean-", "cloud"},
	{"heroku-", "cloud"}, {"sendgrid-", "cloud"}, {"cloudflare-", "cloud"}, {"flyio-", "cloud"}, {"yandex-", "cloud"},
	{"hashicorp-", "cloud"}, {"vault-", "cloud"}, {"openshift-", "cloud"}, {"kubernetes-", "cloud"},
	{"netlify-", "cloud"}, {"planetscale-", "cloud"}, {"scalingo-", "cloud"}, {"databricks-", "cloud"},
	{"clickhouse-", "cloud"}, {"confluent-", "cloud"}, {"pulumi-", "cloud"}, {"doppler-", "cloud"}, {"fastly-", "cloud"},
	{"github-", "vcs"}, {"gitlab-", "vcs"}, {"bitbucket-", "vcs"}, {"sourcegraph-", "vcs"},
	{"slack-", "chat"}, {"microsoft-teams-", "chat"}, {"discord-", "chat"}, {"telegram-", "chat"},
	{"mattermost-", "chat"}, {"gitter-", "chat"},
	{"private-key", "private_key"}, {"age-secret-key", "private_key"},
	{"jwt", "jwt"},
	{"openai-", "ai"}, {"anthropic-", "ai"}, {"huggingface-", "ai"}, {"perplexity-", "ai"}, {"cohere-", "ai"},
	{"privateai-", "ai"},
	{"stripe-", "payment"}, {"square-", "payment"}, {"shopify-", "payment"}, {"plaid-", "payment"},
	{"gocardless-", "payment"}, {"flutterwave-", "payment"}, {"coinbase-", "payment"}, {"kraken-", "payment"},
	{"kucoin-", "payment"}, {"bittrex-", "payment"}, {"finicity-", "payment"},
	{"npm-", "package"}, {"pypi-", "package"}, {"rubygems-", "package"}, {"clojars-", "package"},
	{"nuget-", "package"}, {"artifactory-", "package"}, {"jfrog-", "package"},
	{"generic-", "generic"}, {"curl-", "generic"},
}

func groupOf(id string) string {
	for _, g := range groups {
		if strings.HasPrefix(id, g.prefix) {
			return g.group
		}
	}
	return "service"
}
