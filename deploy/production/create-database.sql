-- The role and database of Ostara in PostgreSQL; idempotent (run by install.sh at every install):
--   runuser -u postgres -- psql -v ON_ERROR_STOP=1 -v role=ostara -v password=SECRET -f create-database.sql
-- The role owns its database and nothing else: no superuser, no CREATEDB, no CREATEROLE.
SELECT format('CREATE ROLE %I LOGIN', :'role')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec
-- The password of the environment file's DATABASE_URL, set again at each run.
SELECT format('ALTER ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD %L', :'role', :'password') \gexec
SELECT format('CREATE DATABASE %I OWNER %I ENCODING %L TEMPLATE template0', :'role', :'role', 'UTF8')
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'role') \gexec
SELECT format('REVOKE ALL ON DATABASE %I FROM PUBLIC', :'role') \gexec
