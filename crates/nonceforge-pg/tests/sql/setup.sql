-- As the administrator (postgres): the extension, and an application role with
-- no rights beyond the defaults. dblink lets the server-order test drive two
-- backends from one script.
CREATE EXTENSION nonceforge;
CREATE EXTENSION dblink;
CREATE ROLE app LOGIN;
