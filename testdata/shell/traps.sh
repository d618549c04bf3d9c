# traps and signals to the shell itself and to children
trap 'echo caught USR1' USR1
trap 'echo caught USR2' USR2
kill -USR1 $$
kill -USR2 $$
sleep 5 &
pid=$!
kill $pid
wait $pid; echo "sleep killed: $?"
trap - USR1
sh -c 'trap "echo child trap; exit 9" TERM; kill -TERM $$; sleep 1'; echo "child with trap: $?"
trap 'echo exiting' EXIT
echo end
sleep 5 &
pid=$!
kill -STOP $pid
kill -CONT $pid
kill -TERM $pid
# Whether ash prints "Terminated" here is a race in ash itself: only when
# the wait builtin, not an earlier SIGCHLD-driven reap, collects the
# status. The message goes to wait's stderr, so it is left out.
wait $pid 2>/dev/null; echo "stopped, continued, terminated: $?"
