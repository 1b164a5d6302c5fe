# The site the fleet demo checks (site.py), on the local debian:bookworm-slim.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 \
 && rm -rf /var/lib/apt/lists/*
COPY site.py /usr/local/bin/site.py
USER nobody
EXPOSE 8000
CMD ["python3", "/usr/local/bin/site.py"]
