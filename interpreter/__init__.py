"""The rulelang runtime: compiles a checked Program and runs games (state, engine, agents, simulation)."""
