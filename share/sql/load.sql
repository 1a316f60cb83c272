-- load.sql: reads the traces once into memory; every recipe after it reads the table instead
-- of parsing the JSON again (several recipes over large traces: read this first).
-- Returns no rows. Needs memory for the whole set of records, less than the JSON's size.
CREATE OR REPLACE TEMP TABLE cut_loaded AS FROM events;
CREATE OR REPLACE TEMP VIEW events AS FROM cut_loaded;
