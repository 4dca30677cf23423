# test/deb_src.sh -- sourced by test/pg_core_regress.sh and test/pg_build.sh.
#
#   write_deb_src_sources DIR   deb-src copies of the system's deb sources
#                               (deb822 .sources and one-line .list files)
#                               into DIR, for a private apt state
write_deb_src_sources() {
	local dir=$1 f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		sed -E 's/^Types:.*/Types: deb-src/' "$f" >"$dir/src-$(basename "$f")"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -nE 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >"$dir/src-$(basename "$f")"
	done
}
