/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The interactive prompt (-i), on DPDK's cmdline library as in testpmd: the
 * commands, their help, and the loop that feeds stdin to the parser. Tab
 * completion comes from the token definitions. The threads, and how runs
 * start and stop, are described in prompt_session.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <cmdline_socket.h>
#include <rte_common.h>

#include "prompt.h"

#define PROMPT TPCQ_PROG "> "
/* How often the loop looks for a run that ended by itself, or a signal. */
#define POLL_MS 100

static struct tpcq_session *session;

/* Results of the parsed commands: a field per token. */
struct res_words {
	cmdline_fixed_string_t w0;
	cmdline_fixed_string_t w1;
	cmdline_fixed_string_t w2;
};

/*
 * cmdline writes its prompt as soon as a command returns: what the command
 * printed must be out by then.
 */
static void
answered(void)
{
	fflush(stdout);
}

static bool
have_run(void)
{
	if (session->have_run)
		return true;
	printf("no run yet: 'start' begins one\n");
	return false;
}

static double
per_s(uint64_t n, uint64_t ns)
{
	return ns > 0 ? (double)n * 1e9 / (double)ns : 0.0;
}

static void
show_stats(void)
{
	struct tpcq_session *s = session;
	const struct tpcq_sample *b = &s->base;
	struct tpcq_sample *m = &s->now;
	double since_last;
	uint64_t win_ns;

	tpcq_session_sample(s, m);
	win_ns = m->ns - b->ns;
	since_last = per_s(m->completions - s->last.completions,
			   m->ns - s->last.ns);
	/* The next "since the last show" starts here. */
	tpcq_sample_copy(&s->last, m);
	/* The window's samples: what was recorded since the base's snapshot. */
	tpcq_hist_sub(m->latency, b->latency);
	printf(" %s run on %s, mode %s, %.3f s counted%s\n",
	       s->running ? "running" : "stopped", s->cur.p.dev_name,
	       tpcq_mode_name(s->cur.p.mode), (double)win_ns / 1e9,
	       s->cleared ? " (since 'clear stats')" : " (since 'start')");
#define ROW(key, fmt, ...) printf(" %-20s: " fmt "\n", key, __VA_ARGS__)
	ROW("completions", "%" PRIu64, m->completions - b->completions);
	ROW("rate", "%.0f /s (%.0f /s since the last show)",
	    per_s(m->completions - b->completions, win_ns), since_last);
	ROW("lost_wakeups", "%" PRIu64, m->lost_wakeups - b->lost_wakeups);
	ROW("events", "%" PRIu64, m->events - b->events);
	ROW("spurious_events", "%" PRIu64, m->spurious_events - b->spurious_events);
	ROW("wait_timeouts", "%" PRIu64, m->wait_timeouts - b->wait_timeouts);
	ROW("cpu_pct", "%.1f", win_ns > 0 ?
	    100.0 * (double)(m->cpu_ns - b->cpu_ns) / (double)win_ns : 0.0);
	ROW("latency_p50_ns", "%" PRIu64, tpcq_hist_quantile(m->latency, 0.50));
	ROW("latency_p99_ns", "%" PRIu64, tpcq_hist_quantile(m->latency, 0.99));
	ROW("latency_p99.9_ns", "%" PRIu64, tpcq_hist_quantile(m->latency, 0.999));
#undef ROW
}

static void
show_settings(void)
{
	const struct tpcq_params *p = &session->next.p;

	printf(" settings of the next start:\n");
#define ROW(key, fmt, ...) printf(" %-20s: " fmt "\n", key, __VA_ARGS__)
	ROW("dev", "%s", p->dev_name);
	ROW("mode", "%s", tpcq_mode_name(p->mode));
	ROW("policy", "%s%s", p->policy, p->mode == TPCQ_MODE_ADAPTIVE ? "" :
	    " (used in adaptive mode)");
	ROW("rate", "%" PRIu64 " /s", p->rate);
	ROW("cqs", "%u", p->cqs);
	ROW("transition", "%s", tpcq_transition_name(p->transition));
	ROW("arm", "%s", cqpoll_arm_semantics_name(p->arm));
	ROW("timeout_ms", "%d", p->timeout_ms);
	ROW("burst", "%u", p->burst);
#undef ROW
}

static void
on_start(void *parsed, struct cmdline *cl)
{
	const struct tpcq_params *p = &session->next.p;

	RTE_SET_USED(parsed);
	RTE_SET_USED(cl);
	if (tpcq_session_start(session) != 0)
		return;
	printf("started: %s, mode %s%s%s, %" PRIu64 " completions/s; 'stop' ends "
	       "the run\n", p->dev_name, tpcq_mode_name(p->mode),
	       p->mode == TPCQ_MODE_ADAPTIVE ? ", policy " : "",
	       p->mode == TPCQ_MODE_ADAPTIVE ? p->policy : "", p->rate);
}

static void
on_stop(void *parsed, struct cmdline *cl)
{
	RTE_SET_USED(parsed);
	RTE_SET_USED(cl);
	tpcq_session_stop(session);
}

static void
on_show(void *parsed, struct cmdline *cl)
{
	const struct res_words *r = parsed;

	RTE_SET_USED(cl);
	if (strcmp(r->w1, "settings") == 0)
		show_settings();
	else if (have_run())
		show_stats();
}

static void
on_clear(void *parsed, struct cmdline *cl)
{
	RTE_SET_USED(parsed);
	RTE_SET_USED(cl);
	if (!have_run())
		return;
	tpcq_session_sample(session, &session->base);
	tpcq_sample_copy(&session->last, &session->base);
	session->cleared = true;
	printf("stats cleared: 'show stats' counts from now; the report at 'stop' "
	       "still covers the whole run\n");
}

static void
on_set_mode(void *parsed, struct cmdline *cl)
{
	const struct res_words *r = parsed;
	struct tpcq_settings cand;
	enum tpcq_mode mode;
	char why[512];
	int live;

	RTE_SET_USED(cl);
	for (mode = TPCQ_MODE_POLL; mode <= TPCQ_MODE_ADAPTIVE; mode++)
		if (strcmp(r->w2, tpcq_mode_name(mode)) == 0)
			break;
	if (mode > TPCQ_MODE_ADAPTIVE) {
		printf("set mode: unknown mode '%s' (poll, interrupt or adaptive)\n",
		       r->w2);
		return;
	}
	tpcq_settings_copy(&cand, &session->next);
	cand.p.mode = mode;
	if (tpcq_params_check_run(&cand.p, why, sizeof(why)) != 0) {
		printf("set mode %s: %s\n", r->w2, why);
		return;
	}
	tpcq_settings_copy(&session->next, &cand);
	live = tpcq_session_mode_live(session, mode);
	if (live == 1)
		printf("mode %s: now, on the running poll group, and at the next "
		       "start\n", r->w2);
	else if (live == -EBUSY)
		printf("mode %s: at the next start; the running group is draining "
		       "after its end\n", r->w2);
	else if (live < 0)
		printf("mode %s: at the next start; the running group refused it: "
		       "%s\n", r->w2, strerror(-live));
	else if (session->running)
		printf("mode %s: at the next start; this run polls one CQ in its own "
		       "loop, which cannot switch (a poll group can: mode adaptive "
		       "or --cqs > 1)\n", r->w2);
	else
		printf("mode %s: at the next start\n", r->w2);
}

static void
on_set_policy(void *parsed, struct cmdline *cl)
{
	const struct res_words *r = parsed;
	struct tpcq_settings cand;
	char why[512];

	RTE_SET_USED(cl);
	tpcq_settings_copy(&cand, &session->next);
	/* The token holds at most TPCQ_PROMPT_POLICY_MAX - 1 bytes. */
	snprintf(cand.policy, sizeof(cand.policy), "%s", r->w2);
	if (tpcq_params_policy(&cand.p, cand.policy, why, sizeof(why)) != 0 ||
	    tpcq_params_check_run(&cand.p, why, sizeof(why)) != 0) {
		printf("set policy: %s\n", why);
		return;
	}
	tpcq_settings_copy(&session->next, &cand);
	printf("policy %s: at the next start (a poll group gets its policy when "
	       "it is created)%s\n", cand.policy,
	       cand.p.mode == TPCQ_MODE_ADAPTIVE ? "" :
	       "; used in adaptive mode ('set mode adaptive')");
}

static void
on_set_rate(void *parsed, struct cmdline *cl)
{
	const struct res_words *r = parsed;
	unsigned long long v;
	char *end;

	RTE_SET_USED(cl);
	/* As --rate: decimal digits only, strtoull() alone takes "-1". */
	errno = 0;
	v = strtoull(r->w2, &end, 10);
	if (r->w2[0] < '0' || r->w2[0] > '9' || *end != '\0') {
		printf("set rate: '%s' is not a non-negative integer\n", r->w2);
		return;
	}
	if (errno == ERANGE || v < 1 || v > TPCQ_RATE_MAX) {
		printf("set rate: %s is out of range 1..%llu completions/s\n",
		       r->w2, (unsigned long long)TPCQ_RATE_MAX);
		return;
	}
	session->next.p.rate = v;
	printf("rate %llu /s: at the next start%s\n", v,
	       session->running ? " (the running generator keeps its schedule)" :
	       "");
}

static void
on_quit(void *parsed, struct cmdline *cl)
{
	RTE_SET_USED(parsed);
	if (session->running)
		tpcq_session_stop(session);
	session->quit = true;
	cmdline_quit(cl);
}

static void on_help(void *parsed, struct cmdline *cl);

/* What a parsed command runs: every command's answer is then flushed. */
struct command {
	void (*run)(void *parsed, struct cmdline *cl);
};

static void
dispatch(void *parsed, struct cmdline *cl, void *data)
{
	const struct command *c = data;

	c->run(parsed, cl);
	answered();
}

#define COMMAND(name, handler, help, ...) \
	static struct command name##_run = { handler }; \
	static cmdline_parse_inst_t name = { \
		.f = dispatch, \
		.data = &name##_run, \
		.help_str = help, \
		.tokens = { __VA_ARGS__, NULL }, \
	}

#define WORD(name, field, words) \
	static cmdline_parse_token_string_t name = \
		TOKEN_STRING_INITIALIZER(struct res_words, field, words)
WORD(tok_start, w0, "start");
WORD(tok_stop, w0, "stop");
WORD(tok_show, w0, "show");
WORD(tok_show_what, w1, "stats#settings");
WORD(tok_clear, w0, "clear");
WORD(tok_clear_what, w1, "stats");
WORD(tok_set, w0, "set");
WORD(tok_mode, w1, "mode");
WORD(tok_policy, w1, "policy");
/* Any word: the policy spec, checked like --policy. */
WORD(tok_policy_spec, w2, NULL);
WORD(tok_quit, w0, "quit");
WORD(tok_help, w0, "help");
WORD(tok_rate, w1, "rate");
/* Any word, so that a bad number gets its own message. */
WORD(tok_rate_n, w2, NULL);
#undef WORD

/*
 * The mode: any word, so that a wrong one is answered with the choices,
 * yet TAB completes the three names (a "#" list would refuse the others
 * with cmdline's bare "Bad arguments").
 */
static int
mode_count(cmdline_parse_token_hdr_t *tk)
{
	RTE_SET_USED(tk);
	return TPCQ_MODE_ADAPTIVE + 1;
}

static int
mode_get(cmdline_parse_token_hdr_t *tk, int idx, char *buf, unsigned int size)
{
	RTE_SET_USED(tk);
	if (idx < 0 || idx > TPCQ_MODE_ADAPTIVE)
		return -1;
	snprintf(buf, size, "%s", tpcq_mode_name((enum tpcq_mode)idx));
	return 0;
}

static int
mode_help(cmdline_parse_token_hdr_t *tk, char *buf, unsigned int size)
{
	RTE_SET_USED(tk);
	snprintf(buf, size, "poll|interrupt|adaptive");
	return 0;
}

static struct cmdline_token_ops mode_ops = {
	.parse = cmdline_parse_string,
	.complete_get_nb = mode_count,
	.complete_get_elt = mode_get,
	.get_help = mode_help,
};
static cmdline_parse_token_string_t tok_mode_name = {
	.hdr = { .ops = &mode_ops, .offset = offsetof(struct res_words, w2) },
	.string_data = { .str = NULL },
};

COMMAND(cmd_start, on_start,
	"start: start generating and polling with the settings; "
		"the run lasts until 'stop'",
	&tok_start.hdr);
COMMAND(cmd_stop, on_stop,
	"stop: stop the run and print its report",
	&tok_stop.hdr);
COMMAND(cmd_show, on_show,
	"show stats|settings: counters of the running or last run "
		"so far; the settings of the next start",
	&tok_show.hdr, &tok_show_what.hdr);
COMMAND(cmd_clear, on_clear,
	"clear stats: count 'show stats' from now on",
	&tok_clear.hdr, &tok_clear_what.hdr);
COMMAND(cmd_set_mode, on_set_mode,
	"set mode poll|interrupt|adaptive: at once on a running poll "
		"group (adaptive mode or --cqs > 1), else at the next start",
	&tok_set.hdr, &tok_mode.hdr, &tok_mode_name.hdr);
COMMAND(cmd_set_policy, on_set_policy,
	"set policy SPEC: spin[:US], adaptive[:key=value,...], "
		"hybrid[:key=value,...], target-p99:US or "
		"latency-target[:key=value,...], as --policy; at the next start",
	&tok_set.hdr, &tok_policy.hdr, &tok_policy_spec.hdr);
COMMAND(cmd_set_rate, on_set_rate,
	"set rate N: completions per second; at the next start",
	&tok_set.hdr, &tok_rate.hdr, &tok_rate_n.hdr);
COMMAND(cmd_quit, on_quit,
	"quit: stop the run if one is going, and exit",
	&tok_quit.hdr);
COMMAND(cmd_help, on_help,
	"help: list the commands",
	&tok_help.hdr);

static cmdline_parse_ctx_t commands[] = {
	&cmd_start,
	&cmd_stop,
	&cmd_show,
	&cmd_clear,
	&cmd_set_mode,
	&cmd_set_policy,
	&cmd_set_rate,
	&cmd_help,
	&cmd_quit,
	NULL,
};

static void
on_help(void *parsed, struct cmdline *cl)
{
	unsigned int i;

	RTE_SET_USED(parsed);
	RTE_SET_USED(cl);
	printf("commands (TAB completes, '?' lists what may follow):\n");
	for (i = 0; commands[i] != NULL; i++)
		printf("  %s\n", commands[i]->help_str);
	printf("Ctrl-D or end of input quits like 'quit'.\n");
}

/*
 * Not cmdline_interact(): it cannot notice a signal, nor a run that ended by
 * itself, while it waits for a key. This loop waits in poll() instead.
 */
static void
interact(struct cmdline *cl)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	char buf[256];
	ssize_t n;
	int r;

	while (!session->quit) {
		if (tpcq_interrupted()) {
			printf("\ninterrupted\n");
			return;
		}
		if (tpcq_session_ended(session)) {
			printf("\nthe run ended by itself:\n");
			tpcq_session_stop(session);
			printf("%s", PROMPT);
		}
		r = poll(&pfd, 1, POLL_MS);
		if (r < 0 && errno != EINTR) {
			printf("\ncannot wait for input: %s\n", strerror(errno));
			return;
		}
		if (r <= 0)
			continue;
		n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			/* End of input: quit, as on a terminal's Ctrl-D. */
			printf("\n");
			return;
		}
		/* Negative after Ctrl-D on an empty line or after "quit". */
		if (cmdline_in(cl, buf, (int)n) < 0)
			return;
	}
}

/*
 * A terminal leaves canonical mode before the first prompt is shown.
 * cmdline_stdin_new() prints the prompt, then switches the terminal: a
 * Ctrl-D typed at that prompt in between was taken by the canonical line
 * discipline, which turns it into a NUL byte once the mode changes, so the
 * quit was lost (1 in 4 with a key sent as soon as the prompt appeared).
 * Returns 1 if @p saved holds the settings to restore.
 */
static int
terminal_raw(struct termios *saved)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, saved) != 0)
		return 0;
	t = *saved;
	/* What cmdline's own terminal_adjust() sets, only earlier. */
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG);
	return tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
}

int
tpcq_prompt(const struct tpcq_params *p, struct tpcq_devctx *dcs)
{
	struct tpcq_session s;
	struct termios saved;
	struct cmdline *cl;
	int ret, raw;

	if (tpcq_session_init(&s, p, dcs) != 0)
		return TPCQ_EXIT_FAIL;
	session = &s;
	raw = terminal_raw(&saved);
	cl = cmdline_stdin_new(commands, PROMPT);
	if (cl == NULL) {
		fprintf(stderr, TPCQ_PROG ": cannot start the prompt\n");
		if (raw)
			tcsetattr(STDIN_FILENO, TCSANOW, &saved);
		tpcq_session_fini(&s);
		return TPCQ_EXIT_FAIL;
	}
	/* Lines, not blocks: each answer before cmdline writes the next prompt. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	interact(cl);
	/* Quit, end of input or signal: a run still going is reported first. */
	if (s.running)
		tpcq_session_stop(&s);
	cmdline_stdin_exit(cl);
	/* cmdline restored the settings it found, which were already ours. */
	if (raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	ret = s.status;
	tpcq_session_fini(&s);
	session = NULL;
	return ret;
}
