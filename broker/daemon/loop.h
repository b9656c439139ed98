/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* cordond's single-threaded event loop (epoll): fd watches and timers. Every
 * daemon module registers its fds here; nothing in the daemon blocks except
 * inside a callback on a bounded local operation. */

#include <stdbool.h>
#include <stdint.h>

struct cordon_loop;
struct cordon_watch;
struct cordon_timer;

/* events: EPOLLIN/EPOLLOUT/...; revents as epoll reports them. */
typedef void (*cordon_watch_fn)(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata);
typedef void (*cordon_timer_fn)(struct cordon_loop *loop, void *userdata);
typedef void (*cordon_pass_fn)(struct cordon_loop *loop, void *userdata);

int cordon_loop_new(struct cordon_loop **ret);
void cordon_loop_free(struct cordon_loop *loop);

/* Watches fd (not owned). Returns 0 and writes *ret (may be NULL) or -errno. */
int cordon_loop_watch(struct cordon_loop *loop, int fd, uint32_t events, cordon_watch_fn fn, void *userdata,
		      struct cordon_watch **ret);
int cordon_loop_watch_modify(struct cordon_watch *w, uint32_t events);
/* Stops watching; safe to call from inside any callback (also its own). */
void cordon_loop_unwatch(struct cordon_watch *w);

/* One-shot timer after `ms` milliseconds (monotonic). Safe from callbacks. */
int cordon_loop_timer(struct cordon_loop *loop, uint64_t ms, cordon_timer_fn fn, void *userdata,
		      struct cordon_timer **ret);
void cordon_loop_timer_cancel(struct cordon_timer *t);

/* fn runs at the end of every iteration, nested ones included, after its
 * fd callbacks and timers (cordond commits the pass's batch of decisions
 * there). One hook; NULL removes it. */
void cordon_loop_on_pass_end(struct cordon_loop *loop, cordon_pass_fn fn, void *userdata);

/* Runs one iteration, waiting at most timeout_ms (-1: until something
 * happens). Returns the number of callbacks run or -errno. */
int cordon_loop_run_once(struct cordon_loop *loop, int timeout_ms);

/* Runs until cordon_loop_quit(). Returns the exit code given to quit. */
int cordon_loop_run(struct cordon_loop *loop);
void cordon_loop_quit(struct cordon_loop *loop, int code);

uint64_t cordon_loop_now_ms(void);
