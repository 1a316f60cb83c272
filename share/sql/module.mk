# DuckDB views and recipes for the traces of many ranks, installed under $(DATADIR)/sql;
# the installed events.sql looks for api-categories.tsv in $(DATADIR) by default.
SQL_FILES := $(filter-out share/sql/events.sql,$(wildcard share/sql/*.sql))

.PHONY: install-sql duckdb
install: install-sql
install-sql:
	install -d $(DESTDIR)$(DATADIR)/sql
	install -m 644 $(SQL_FILES) $(DESTDIR)$(DATADIR)/sql
	install -m 755 share/sql/run.js $(DESTDIR)$(DATADIR)/sql
	sed "s|'share/data')|'$(DATADIR)')|" share/sql/events.sql >$(DESTDIR)$(DATADIR)/sql/events.sql
	chmod 644 $(DESTDIR)$(DATADIR)/sql/events.sql

# DuckDB for Node.js from npm, for share/sql/run.js and the test (needs node and npm).
duckdb:
	@share/scripts/duckdb-node.sh >/dev/null && echo "duckdb: NODE_PATH=$$(share/scripts/duckdb-node.sh)"
