# test/env.sh -- sourced by the scripts in test/ and bench/: finds
# PostgreSQL's pg_config and the CUDA toolkit by their files.
PG_MAJOR=${PG_MAJOR:-15}

find_pg_config() {
	if [ -n "${PG_CONFIG:-}" ]; then echo "$PG_CONFIG"; return; fi
	local c
	for c in "/usr/lib/postgresql/$PG_MAJOR/bin/pg_config" "$(command -v pg_config || true)"; do
		if [ -n "$c" ] && [ -x "$c" ]; then echo "$c"; return; fi
	done
}

if [ -z "${NVCC:-}" ] && [ -z "${CUDA_HOME:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
	export CUDA_HOME=/usr/local/cuda
fi
PG_CONFIG=$(find_pg_config)
export PG_CONFIG
