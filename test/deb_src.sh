# test/deb_src.sh -- sourced by test/pg_core_regress.sh, test/pg_build.sh and
# test/pg_headers_check.sh: apt fetches that leave the system's apt sources
# and lists alone.
#
#   private_apt_state DIR       make DIR an apt state of its own (sources in
#                               DIR/sources.list.d, lists and cache inside)
#                               and set the array apt_opts that points apt-get
#                               and apt-cache at it (declare it local first to
#                               keep it in a function)
#   write_suite_sources FILE TYPES SUITE MIRROR
#                               a deb822 sources file of one suite of MIRROR
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

private_apt_state() {
	local dir=$1
	mkdir -p "$dir/sources.list.d" "$dir/lists/partial" "$dir/cache/archives/partial"
	: >"$dir/empty.list"
	apt_opts=(-o "Dir::Etc::SourceList=$dir/empty.list" -o "Dir::Etc::SourceParts=$dir/sources.list.d"
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -o APT::Sandbox::User=root -qq)
}

write_suite_sources() {
	cat >"$1" <<-EOF
		Types: $2
		URIs: $4
		Suites: $3
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
}
