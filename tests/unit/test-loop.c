/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's event loop: fd callbacks, one-shot timers in order,
 * unwatching from inside a callback, quit, the end-of-pass hook. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cmocka.h>

#include "loop.h"

struct ctx {
	int reads;
	int order[4];
	int n_order;
	struct cordon_watch *w;
};

static void on_read(struct cordon_loop *loop, int fd, uint32_t revents, void *ud)
{
	struct ctx *c = ud;
	char b;

	(void)loop;
	assert_true(revents & EPOLLIN);
	assert_int_equal(read(fd, &b, 1), 1);
	c->reads++;
	if (c->reads == 2)
		cordon_loop_unwatch(c->w); /* from inside its own callback */
}

static void test_fd_watch_and_unwatch(void **state)
{
	struct cordon_loop *loop = NULL;
	struct ctx c = { 0 };
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(cordon_loop_new(&loop), 0);
	assert_int_equal(cordon_loop_watch(loop, p[0], EPOLLIN, on_read, &c, &c.w), 0);
	assert_int_equal(write(p[1], "abc", 3), 3);
	assert_int_equal(cordon_loop_run_once(loop, 1000), 1);
	assert_int_equal(cordon_loop_run_once(loop, 1000), 1);
	/* Unwatched: the third byte is never read. */
	assert_int_equal(cordon_loop_run_once(loop, 50), 0);
	assert_int_equal(c.reads, 2);
	cordon_loop_free(loop);
	close(p[0]);
	close(p[1]);
}

struct pass_ctx {
	int reads, reads_at_pass_end[4], passes;
};

static void on_read_one(struct cordon_loop *loop, int fd, uint32_t revents, void *ud)
{
	struct pass_ctx *c = ud;
	char b;

	(void)loop;
	(void)revents;
	assert_int_equal(read(fd, &b, 1), 1);
	c->reads++;
}

static void on_pass_end(struct cordon_loop *loop, void *ud)
{
	struct pass_ctx *c = ud;

	(void)loop;
	if (c->passes < 4)
		c->reads_at_pass_end[c->passes] = c->reads;
	c->passes++;
}

/* The end-of-pass hook (cordond commits a pass's batch of decisions there)
 * runs once per iteration, after every fd callback of it. */
static void test_pass_end_hook_after_callbacks(void **state)
{
	struct cordon_loop *loop = NULL;
	struct pass_ctx c = { 0 };
	struct cordon_watch *wa = NULL, *wb = NULL;
	int a[2], b[2];

	(void)state;
	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	assert_int_equal(cordon_loop_new(&loop), 0);
	cordon_loop_on_pass_end(loop, on_pass_end, &c);
	assert_int_equal(cordon_loop_watch(loop, a[0], EPOLLIN, on_read_one, &c, &wa), 0);
	assert_int_equal(cordon_loop_watch(loop, b[0], EPOLLIN, on_read_one, &c, &wb), 0);
	assert_int_equal(write(a[1], "x", 1), 1);
	assert_int_equal(write(b[1], "y", 1), 1);
	assert_int_equal(cordon_loop_run_once(loop, 1000), 2);
	assert_int_equal(c.passes, 1);
	assert_int_equal(c.reads_at_pass_end[0], 2);
	assert_int_equal(cordon_loop_run_once(loop, 0), 0);
	assert_int_equal(c.passes, 2);
	cordon_loop_on_pass_end(loop, NULL, NULL);
	assert_int_equal(cordon_loop_run_once(loop, 0), 0);
	assert_int_equal(c.passes, 2);
	cordon_loop_unwatch(wa);
	cordon_loop_unwatch(wb);
	cordon_loop_free(loop);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

static void on_timer(struct cordon_loop *loop, void *ud)
{
	struct ctx *c = ud;

	(void)loop;
	c->order[c->n_order] = c->n_order;
	c->n_order++;
}

static void on_quit(struct cordon_loop *loop, void *ud)
{
	(void)ud;
	cordon_loop_quit(loop, 42);
}

static void test_timers_and_quit(void **state)
{
	struct cordon_loop *loop = NULL;
	struct cordon_timer *cancelled = NULL;
	struct ctx c = { 0 };
	uint64_t t0;

	(void)state;
	assert_int_equal(cordon_loop_new(&loop), 0);
	assert_int_equal(cordon_loop_timer(loop, 10, on_timer, &c, NULL), 0);
	assert_int_equal(cordon_loop_timer(loop, 20, on_timer, &c, NULL), 0);
	assert_int_equal(cordon_loop_timer(loop, 30, on_timer, &c, &cancelled), 0);
	cordon_loop_timer_cancel(cancelled);
	assert_int_equal(cordon_loop_timer(loop, 60, on_quit, NULL, NULL), 0);
	t0 = cordon_loop_now_ms();
	assert_int_equal(cordon_loop_run(loop), 42);
	assert_true(cordon_loop_now_ms() - t0 >= 60);
	assert_int_equal(c.n_order, 2); /* the cancelled one never ran */
	cordon_loop_free(loop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fd_watch_and_unwatch),
		cmocka_unit_test(test_timers_and_quit),
		cmocka_unit_test(test_pass_end_hook_after_callbacks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
