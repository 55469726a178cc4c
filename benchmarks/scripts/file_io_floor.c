/*
 * The file system's floor under the file command: how fast this host reads and writes one large file
 * with positional I/O and through a mapping, on 1-16 threads, beside cp (docs/PERFORMANCE.md, "User
 * paths"). Writes a scratch INPUT of SIZE_MIB, times each way into OUTPUT, removes both.
 *   gcc -O2 -pthread -o /tmp/file_io_floor benchmarks/scripts/file_io_floor.c
 *   /tmp/file_io_floor /dev/shm/floor-in.bin /dev/shm/floor-out.bin 3072
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#define CHUNK (8L << 20)
static long size; static const char *in_path, *out_path;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
typedef struct {int id,n,mode; int fd; char *map; char *buf;} arg_t;
static void *work(void *p){arg_t*a=p; long chunks=(size+CHUNK-1)/CHUNK;
  for(long c=a->id;c<chunks;c+=a->n){long off=c*CHUNK,len=size-off<CHUNK?size-off:CHUNK;
    switch(a->mode){
      case 0: if(pread(a->fd,a->buf,len,off)!=len) perror("pread"); break;
      case 1: if(pwrite(a->fd,a->buf,len,off)!=len) perror("pwrite"); break;
      case 2: memcpy(a->map+off,a->buf,len); break;
      case 3: memcpy(a->buf,a->map+off,len); break;
    }} return 0;}
static double run(int mode,int n,int fd,char*map){pthread_t t[64];arg_t a[64];double s=now();
  for(int i=0;i<n;i++){a[i]=(arg_t){i,n,mode,fd,map,aligned_alloc(4096,CHUNK)};memset(a[i].buf,i+1,CHUNK);}
  s=now();
  for(int i=0;i<n;i++)pthread_create(&t[i],0,work,&a[i]);
  for(int i=0;i<n;i++)pthread_join(t[i],0);
  double e=now()-s; for(int i=0;i<n;i++)free(a[i].buf); return e;}
int main(int argc,char**argv){in_path=argv[1];out_path=argv[2];size=atol(argv[3])<<20;
  int threads[]={1,2,4,8,16};
  // input
  int fd=open(in_path,O_CREAT|O_RDWR|O_TRUNC,0644); double t=run(1,1,fd,0); close(fd);
  printf("make input %ld MiB: %.3f s\n",size>>20,t);
  char cmd[512]; snprintf(cmd,512,"cp %s %s",in_path,out_path); unlink(out_path);
  double s=now(); system(cmd); printf("cp: %.3f s\n",now()-s); unlink(out_path);
  for(int k=0;k<5;k++){int n=threads[k];
    fd=open(in_path,O_RDONLY); t=run(0,n,fd,0); close(fd); printf("pread  %2d threads: %.3f s %.2f GB/s\n",n,t,size/t/1e9);
    fd=open(out_path,O_CREAT|O_RDWR|O_TRUNC,0644); t=run(1,n,fd,0); close(fd); unlink(out_path); printf("pwrite %2d threads: %.3f s %.2f GB/s\n",n,t,size/t/1e9);
    fd=open(out_path,O_CREAT|O_RDWR|O_TRUNC,0644); s=now(); ftruncate(fd,size); char*m=mmap(0,size,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0);
    t=run(2,n,fd,m); munmap(m,size); close(fd); printf("mmap write %2d threads: %.3f s (incl map %.3f) %.2f GB/s\n",n,t,now()-s,size/t/1e9); unlink(out_path);
    fd=open(out_path,O_CREAT|O_RDWR|O_TRUNC,0644); s=now(); fallocate(fd,0,0,size); double f=now()-s; t=run(1,n,fd,0); close(fd); unlink(out_path); printf("fallocate %.3f s + pwrite %2d threads %.3f s\n",f,n,t);
    fd=open(in_path,O_RDONLY); m=mmap(0,size,PROT_READ,MAP_SHARED,fd,0); t=run(3,n,fd,m); munmap(m,size); close(fd); printf("mmap read %2d threads: %.3f s %.2f GB/s\n",n,t,size/t/1e9);
    fd=open(in_path,O_RDONLY); m=mmap(0,size,PROT_READ,MAP_SHARED|MAP_POPULATE,fd,0); t=run(3,n,fd,m); munmap(m,size); close(fd); printf("mmap populate read %2d threads: %.3f s\n",n,t);
  }
  unlink(in_path); return 0;}
