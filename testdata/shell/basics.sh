echo hello from sh
x=$(echo sub | tr a-z A-Z); echo "cmdsub: $x"
(exit 3); echo "subshell status: $?"
echo a b c | wc -w
trap 'echo got USR1' USR1
kill -USR1 $$
sleep 0.1 &
wait $!; echo "wait status: $?"
for i in 1 2 3; do echo -n "$i "; done; echo
false || echo "or works"
ls /nonexistent 2>/dev/null; echo "ls status: $?"
echo done
